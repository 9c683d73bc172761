package model

import "slices"

// The stack: what the training run really holds, beyond Megatron's
// theoretical formula. Defaults and sources: docs/estimate.md "The stack".

// Stack choices (Training's string options).
const (
	ImplTransformerEngine = "transformer_engine"
	ImplLocal             = "local"

	AttentionAuto    = "auto"
	AttentionFlash   = "flash"
	AttentionFused   = "fused"
	AttentionUnfused = "unfused"
	AttentionLocal   = "local"

	RecomputeUniform = "uniform"
	RecomputeBlock   = "block"
)

// Resolve returns t with each zero value replaced by what the targets run
// by default:
//   - transformer_impl transformer_engine and attention_backend auto
//     (megatron/core/transformer/transformer_config.py:1314 and :151 at
//     Megatron-LM d98e8a6; Megatron-LM's arguments and Megatron-Bridge's
//     providers take TransformerConfig's defaults);
//   - gradients reduced in fp32 (GradReduceInBF16 false): Megatron-LM
//     forces it for bf16 (megatron/training/arguments.py:1213-1217),
//     Megatron-Bridge's bf16_mixed sets it
//     (src/megatron/bridge/training/mixed_precision.py:47 and :196 at
//     067f987);
//   - recompute_method uniform and recompute_num_layers 1 under full
//     recompute, as Megatron-LM's examples run it; micro batch 1.
func (t Training) Resolve() Training {
	if t.TransformerImpl == "" {
		t.TransformerImpl = ImplTransformerEngine
	}
	if t.AttentionBackend == "" {
		t.AttentionBackend = AttentionAuto
	}
	if t.RecomputeMethod == "" {
		t.RecomputeMethod = RecomputeUniform
	}
	if t.RecomputeNumLayers <= 0 {
		t.RecomputeNumLayers = 1
	}
	if t.MicroBatchSize == 0 {
		t.MicroBatchSize = 1
	}
	return t
}

// unfusedAttention reports whether core attention materializes its a*s*s
// scores: Megatron's own DotProductAttention (attention_backend local, or
// auto under the local layers, whose spec uses it) or Transformer Engine
// told to run unfused. flash and fused keep O(s).
func (t *Training) unfusedAttention() bool {
	switch t.AttentionBackend {
	case AttentionUnfused, AttentionLocal:
		return true
	case AttentionFlash, AttentionFused:
		return false
	}
	return t.TransformerImpl == ImplLocal
}

// scoresKept reports whether the scores are kept for backward: unfused
// attention unless full recompute or selective recompute of core attention
// (recompute_modules' core_attn) recomputes it.
func (t *Training) scoresKept() bool {
	return t.unfusedAttention() && t.RecomputeGranularity != RecomputeFull && !t.Recomputes("core_attn")
}

// Recomputes reports whether selective recompute recomputes module (one
// of recompute_modules' names): core attention alone unless
// recompute_modules says otherwise (transformer_config.py:1940-1941 at
// d98e8a6).
func (t *Training) Recomputes(module string) bool {
	if t.RecomputeGranularity != RecomputeSelective {
		return false
	}
	if t.RecomputeModules == nil {
		return module == "core_attn"
	}
	return slices.Contains(t.RecomputeModules, module)
}

// MoECapacityShare is the routed tokens an expert computes, as a share of
// its even share of a micro-batch's: every expert is filled to capacity,
// moe_expert_capacity_factor times its even share, when its input is
// padded to capacity (get_capacity, moe_utils.py:248-266 at d98e8a6: the
// tokens times topk over the experts, times the factor); without padding
// the cap only drops what is above it, and balanced routing (the
// estimate's and the step-time model's assumption) fills each expert to
// its even share, so a factor below 1 is all that shows. Dropless: 1.
func (t Training) MoECapacityShare() float64 {
	f := t.MoEExpertCapacityFactor
	switch {
	case f <= 0:
		return 1
	case t.MoEPadExpertInputToCapacity:
		return f
	}
	return min(f, 1)
}

// MoEStaticShapes reports whether the MoE layers run with shapes fixed in
// advance: the alltoall dispatcher with its input padded to capacity sets
// every count from the capacity (token_dispatcher.py:517-540 at d98e8a6,
// num_tokens_per_local_expert a host tensor), so it reads none back from
// the GPU and keeps its cuda_sync_point "no_sync" (:457), and every MoE
// buffer has one size from step to step.
func (t Training) MoEStaticShapes() bool {
	return t.MoEPadExpertInputToCapacity && t.MoEExpertCapacityFactor > 0 && t.MoETokenDispatcherType == "alltoall"
}

// torchAdam reports whether the optimizer is the torch AdamW fallback
// (megatron/core/optimizer/__init__.py:13-33: Transformer Engine's
// FusedAdam, else Apex's, else torch.optim.AdamW).
func (t *Training) torchAdam() bool { return t.TransformerImpl == ImplLocal }

// layerShape prices one transformer layer's activations on one rank, in
// Korthikanti et al.'s accounting (arXiv:2205.05198, section 4.1), with the
// model's own widths: per token, 2 bytes for every bf16 tensor kept for
// backward.
type layerShape struct {
	hidden, heads, groups, kvch, ffn int
	gated                            bool

	// MoE layers (routed experts replace the dense MLP); capacity is the
	// routed copies an expert holds, as a share of its even share
	// (Training.MoECapacityShare).
	experts, topk, moeFFN, sharedFFN, etp int
	capacity                              float64

	tp     int
	sp     bool // sequence parallel: the replicated part splits over tp
	scores bool // unfused attention keeps softmax, its dropout and mask
	frozen bool // frozen weights: linear layers keep no input for their weight gradients
	noGrad bool // nothing before the module trains: autograd keeps nothing
	// normExtra is what each of a layer's two norms keeps beyond its bf16
	// input, in bytes per token and hidden unit.
	normExtra float64
	// fp8: Transformer Engine keeps the inputs of its fp8 GEMMs in fp8 (1
	// byte) for backward.
	fp8 bool
	// teExperts: the experts are Transformer Engine's grouped MLP
	// (transformer_impl transformer_engine), whose permutation keeps no
	// token copies for backward (moeTEExperts).
	teExperts bool
	// rc: the submodules selective recompute recomputes beyond core
	// attention (recompute_modules), whose activations backward
	// recomputes in place of keeping them; mlaLatent is what
	// multi-latent attention's up-projections keep then, their inputs:
	// the compressed query and key-value and the rope key, per token.
	rc        recomputed
	mlaLatent int
}

// recomputed are the recompute_modules a layer shape prices as
// recomputed.
type recomputed struct{ mlaUp, mlp, moe, shared, norm bool }

// recomputedOf is what t recomputes of a model like c: mla_up_proj only
// with multi-latent attention (recompute-module-unsupported refuses it
// otherwise).
func recomputedOf(c *Config, t *Training) recomputed {
	return recomputed{
		mlaUp: c.MultiLatentAttention && t.Recomputes("mla_up_proj"), mlp: t.Recomputes("mlp"),
		moe: t.Recomputes("moe"), shared: t.Recomputes("shared_experts"), norm: t.Recomputes("layernorm"),
	}
}

// torchRMSNormExtra is torch.nn.RMSNorm's extra per element (the local
// layers' norm, megatron/core/transformer/torch_norm.py): torch computes
// RMSNorm in fp32 (opmath), so autograd keeps the fp32 upcast of the input
// (4 bytes) and the bf16 normalized tensor (2) where Transformer Engine's
// kernel keeps the bf16 input (2). Checked against the measured local-spec
// runs (docs/estimate.md).
const torchRMSNormExtra = 4

func (l *layerShape) repl(tokens float64) float64 {
	// Two norm inputs (4), the attention and MLP inputs (4), two dropout
	// masks (2): 10*s*b*h. A frozen layer keeps no linear-layer inputs.
	// Recomputed norms (layernorm) keep their inputs and recompute the
	// outputs the next linear layers read (which a frozen layer does not
	// keep anyway).
	x := 10 + 2*l.normExtra
	if l.rc.norm && !l.frozen {
		x -= 4
	}
	switch {
	case l.frozen:
		x -= 4
	case l.fp8:
		x -= 2 // the attention and MLP inputs in fp8
	}
	return x * tokens * float64(l.hidden)
}

// attention is Q, K, V and the projection input (O): 2 bytes each, K and V
// at the query groups' width; the scores (5*a*s bytes per token) when kept.
func (l *layerShape) attention(tokens float64, seq int) float64 {
	qd := float64(l.heads * l.kvch)
	kv := float64(l.groups * l.kvch)
	proj := 2 * qd
	if l.fp8 && !l.frozen {
		proj = qd
	}
	b := tokens * (2*qd + 4*kv + proj)
	if l.rc.mlaUp {
		// mla_up_proj: the up-projected q, k and v are recomputed from
		// their latents, which every tp rank keeps whole (the caller
		// divides by tp).
		b = tokens * (proj + 2*float64(l.mlaLatent*l.tp))
	}
	if l.scores {
		b += 5 * float64(l.heads) * float64(seq) * tokens
	}
	return b
}

// mlp is the MLP's activation input and output (GeLU: 2+2 bytes per
// intermediate value; gated: 4+2); frozen, the output (fc2's input) is not
// kept.
func (l *layerShape) mlp(tokens float64, ffn int) float64 {
	in, out := 2.0, 2.0
	if l.gated {
		in = 4
	}
	switch {
	case l.frozen:
		out = 0
	case l.fp8:
		out = 1 // fc2's input in fp8
	}
	return tokens * float64(ffn) * (in + out)
}

// dense is one dense layer on one rank.
func (l *layerShape) dense(seq, mbs int) float64 {
	if l.noGrad {
		return 0
	}
	tokens := prod(seq, mbs)
	tp := float64(l.tp)
	mlp := l.mlp(tokens, l.ffn)
	if l.rc.mlp {
		mlp = 0 // recomputed from its input, which repl keeps
	}
	par := (l.attention(tokens, seq) + mlp) / tp
	if l.sp {
		return l.repl(tokens)/tp + par
	}
	return l.repl(tokens) + par
}

// moe is one MoE layer on one rank: attention and the replicated part as a
// dense layer, then the router's fp32 logits and probabilities, the topk
// permuted copies of each token in and out of the experts (gathered over
// expert tp), the experts' MLP for each copy, and a shared expert. Tokens
// are split over tp (Megatron requires sequence parallelism for MoE with
// tp > 1) and, routed evenly, each rank's experts see topk times its own.
func (l *layerShape) moe(seq, mbs int) float64 {
	if l.noGrad {
		return 0
	}
	tokens := prod(seq, mbs)
	tp := float64(l.tp)
	b := l.attention(tokens, seq) / tp
	if l.sp || l.tp == 1 {
		b += l.repl(tokens) / tp
	} else {
		b += l.repl(tokens)
	}
	local := tokens / tp
	if l.sharedFFN > 0 && !l.rc.shared && !l.rc.moe {
		b += l.mlp(local, l.sharedFFN)
	}
	if l.rc.moe {
		// The whole MoE layer recomputed from its input (repl keeps it).
		return b
	}
	copies := local * float64(l.topk) * l.capacity
	b += 8 * local * float64(l.experts)
	if l.teExperts {
		b += l.teExpertInputs(copies)
	} else {
		b += 2 * 2 * copies * float64(l.hidden*l.etp)
	}
	b += l.mlp(copies, l.moeFFN)
	return b
}

// teExpertInputs is what Transformer Engine's experts keep per routed copy
// beyond the MLP's activation input and fc2 input (mlp), at Megatron-LM
// d98e8a6: the permutation and un-permutation around the all-to-all keep
// only their index maps (moe_utils.py:344 permute, :497 unpermute; fused,
// Transformer Engine's moe_permute and moe_unpermute save the row map),
// and the combine un-permutes without probabilities
// (token_dispatcher.py:891), so no hidden-wide copy is kept there; the
// experts' fc1 (TEGroupedMLP, experts.py:932, a GroupedLinear) keeps its
// input, gathered over expert tp: 2 bytes a value, 1 in fp8, none when
// frozen; the probabilities are applied in the activation function
// (experts.py:943-1015, weighted_bias_swiglu_impl; fc2 at :1028 keeps its input, as mlp counts), which keeps the fp32
// probability of each copy (4 bytes).
func (l *layerShape) teExpertInputs(copies float64) float64 {
	in := 2.0
	switch {
	case l.frozen:
		in = 0
	case l.fp8:
		in = 1
	}
	return copies * (in*float64(l.hidden*l.etp) + 4)
}

func newLayerShape(c *Config, p *Parallel, t *Training) layerShape {
	l := layerShape{
		hidden: c.HiddenSize, heads: c.NumAttentionHeads, groups: c.queryGroups(), kvch: c.KVChannels,
		ffn: c.FFNHiddenSize, gated: c.Swiglu, tp: p.TP, sp: t.SequenceParallel && p.TP > 1,
		scores: t.scoresKept(), frozen: t.Frozen, noGrad: t.Frozen && c.VocabSize == 0,
		teExperts: t.TransformerImpl != ImplLocal,
	}
	if c.MultiLatentAttention {
		// MLA keeps q, k (nope + rope) and v per head.
		l.groups, l.kvch = c.NumAttentionHeads, (2*(c.QKHeadDim+c.QKPosEmbHeadDim)+c.VHeadDim)/4
		l.mlaLatent = c.QLoRARank + c.KVLoRARank + c.QKPosEmbHeadDim
	}
	if c.NumExperts > 0 {
		l.experts, l.topk, l.moeFFN, l.sharedFFN, l.etp = c.NumExperts, c.MoERouterTopK, c.MoEFFNHiddenSize, c.MoESharedExpertIntermediateSize, p.ExptTP
		l.capacity = t.MoECapacityShare()
	}
	return l
}

// perLayer is the mean per-layer bytes on one rank over the model's dense
// and MoE layers, with or without the experts priced (withMoE false prices
// an MoE layer as dense, as Megatron's formula does).
func (l layerShape) perLayer(c *Config, withMoE bool) func(seq, mbs int) float64 {
	dense, moe, _ := c.layerCounts()
	n := float64(max(c.NumLayers, 1))
	return func(seq, mbs int) float64 {
		if !withMoE || moe == 0 {
			return l.dense(seq, mbs)
		}
		return (float64(dense)*l.dense(seq, mbs) + float64(moe)*l.moe(seq, mbs)) / n
	}
}
