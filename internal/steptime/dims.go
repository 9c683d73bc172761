package steptime

import "github.com/mimoplan/mimoplan/internal/model"

// Dims is what the calibrated model reads of a model beyond Shape's
// totals: the GEMM widths and how the FLOPs and parameters split between
// dense layers, experts and attention. The zero Dims reads every FLOP as a
// dense GEMM of the hidden size.
type Dims struct {
	FFN     int // dense MLP width (ffn_hidden_size)
	MoEFFN  int // an expert's MLP width
	Experts int // num_experts
	// AttnFLOPsPerSample is the s^2 part of Megatron's FLOPs (the score and
	// context products of core attention), which runs in the attention
	// kernel, not in GEMMs; ExpertFLOPsPerSample the routed experts' MLP.
	AttnFLOPsPerSample   float64
	ExpertFLOPsPerSample float64
	// LogitsFLOPsPerSample is the output layer's (and the MTP heads'),
	// which Megatron places on the last pipeline stage.
	LogitsFLOPsPerSample float64
	// DenseParams and ExpertParams are the model's parameters outside and
	// inside the routed experts; their gradients are reduced over the data
	// and the expert-data parallel groups.
	DenseParams, ExpertParams float64
	// SequenceParallel: the module runs with sequence parallelism (the
	// layout gives it to the language module alone: ShapeIn).
	SequenceParallel bool
	// LayerTensors is the parameter tensors of a layer outside its routed
	// experts (norms, linear weights and biases, the router),
	// ExpertTensors those of one routed expert and OuterTensors those
	// outside the layers (embeddings, final norm, output layer), as
	// Megatron's GPTModel builds them; the local stack's optimizer pays per
	// tensor (LocalConstants.OptimizerTensor).
	LayerTensors, ExpertTensors, OuterTensors float64
	// SharedExpert: the MoE layers have a shared expert
	// (moe_shared_expert_intermediate_size), two more GEMMs each.
	SharedExpert bool
	// Gated: the MLPs are gated (swiglu): fc1 is twice the MLP's width.
	Gated bool
	// The FLOPs of the submodules selective recompute may run again
	// (recompute_modules), forward and backward as Megatron counts them:
	// the dense layers' MLPs, the shared experts, and multi-latent
	// attention's up-projections (with the query's projection when it is
	// not compressed).
	DenseMLPFLOPsPerSample, SharedExpertFLOPsPerSample, MLAUpFLOPsPerSample float64
}

// DimsOf splits config c as Megatron's num_floating_point_operations does
// (internal/model/flops.go): core attention 6*q*s^2 per layer and sample
// (the causal half of the forward score and context products, times 3 for
// forward and backward), routed experts 6*h*moe_ffn*topk*(2 or 3 with
// swiglu) per token and MoE layer, the output layer 6*h*vocab per token
// and head.
func DimsOf(cfg model.Config) Dims {
	c := cfg.Resolve()
	e := model.Compute(cfg, model.Parallel{NumRanks: 1, DP: 1}, model.Training{})
	d := Dims{FFN: c.FFNHiddenSize, MoEFFN: c.MoEFFNHiddenSize, Experts: c.NumExperts,
		SharedExpert: c.MoESharedExpertIntermediateSize > 0, Gated: c.Swiglu}
	if d.MoEFFN == 0 {
		d.MoEFFN = d.FFN
	}
	seq, h := float64(c.SeqLength), float64(c.HiddenSize)
	q := float64(c.KVChannels * c.NumAttentionHeads)
	if c.MultiLatentAttention {
		q = float64(c.NumAttentionHeads * (c.QKHeadDim + c.QKPosEmbHeadDim + c.VHeadDim) / 2)
	}
	layers := float64(c.NumLayers + c.MTPNumLayers)
	d.AttnFLOPsPerSample = 6 * q * seq * seq * layers
	ffnExp := 2.0
	if c.Swiglu {
		ffnExp = 3
	}
	moe := float64(moeLayers(&c))
	if c.NumExperts > 0 {
		d.ExpertFLOPsPerSample = 6 * h * float64(d.MoEFFN) * float64(c.MoERouterTopK) * ffnExp * moe * seq
		d.ExpertParams = float64(c.NumExperts) * ffnExp * h * float64(d.MoEFFN) * moe
	}
	dense := float64(c.NumLayers) - moe
	d.DenseMLPFLOPsPerSample = 6 * h * float64(c.FFNHiddenSize) * ffnExp * dense * seq
	d.SharedExpertFLOPsPerSample = 6 * h * float64(c.MoESharedExpertIntermediateSize) * ffnExp * moe * seq
	if c.MultiLatentAttention {
		heads := float64(c.NumAttentionHeads)
		qIn := float64(c.QLoRARank)
		if qIn == 0 {
			qIn = h
		}
		up := qIn*heads*float64(c.QKHeadDim+c.QKPosEmbHeadDim) + float64(c.KVLoRARank)*heads*float64(c.QKHeadDim+c.VHeadDim)
		d.MLAUpFLOPsPerSample = 6 * up * float64(c.NumLayers) * seq
	}
	d.DenseParams = max(0, e.Megatron.Parameters-d.ExpertParams)
	d.LogitsFLOPsPerSample = 6 * h * float64(e.Megatron.PaddedVocabSize) * float64(c.MTPNumLayers+1) * seq
	d.LayerTensors, d.ExpertTensors, d.OuterTensors = tensors(&c, moe/float64(max(1, c.NumLayers)))
	return d
}

// tensors counts the parameter tensors of GPTModel's local spec: a
// weight and (add_bias_linear) a bias per linear layer, a weight and
// (LayerNorm) a bias per norm; a MoE layer has a router and its experts'
// fc1 and fc2 in place of the MLP, and a shared expert beside them; word
// and position embeddings, the final norm and an untied
// output layer outside the layers. moeShare is the share of layers that
// are MoE. (Checked against the tensors Megatron built in
// testdata/measured/components-h200.json's optimizer cases.)
func tensors(c *model.Config, moeShare float64) (layer, expert, outer float64) {
	lin, norm := 1.0, 1.0
	if c.AddBiasLinear == nil || *c.AddBiasLinear {
		lin = 2
	}
	if c.Normalization != "RMSNorm" {
		norm = 2
	}
	attn := 2*norm + 2*lin // input and pre-MLP norms, QKV, projection
	mlp := 2 * lin
	moe := 1.0 // router
	if c.MoESharedExpertIntermediateSize > 0 {
		moe += 2 * lin
	}
	layer = attn + (1-moeShare)*mlp + moeShare*moe
	if c.NumExperts > 0 {
		expert = 2 * lin
	}
	// Word and position embeddings (Megatron's default learned_absolute:
	// the model keys have no position_embedding_type), final norm.
	outer = 2 + norm
	if c.UntieEmbeddingsAndOutputWeights {
		outer++
	}
	return layer, expert, outer
}

func moeLayers(c *model.Config) int {
	if c.NumExperts == 0 {
		return 0
	}
	n := 0
	for i := 0; i < c.NumLayers; i++ {
		switch {
		case len(c.MoELayerPattern) > 0:
			if i < len(c.MoELayerPattern) && c.MoELayerPattern[i] == 1 {
				n++
			}
		case c.MoELayerFreq > 0 && i%c.MoELayerFreq == 0:
			n++
		}
	}
	return n
}
