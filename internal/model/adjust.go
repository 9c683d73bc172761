package model

import (
	"fmt"
	"strings"
)

// Term names of mimoplan's adjustments (docs/estimate.md explains each).
const (
	TermNoOutputLayer   = "no_output_layer"
	TermFullRecompute   = "full_recompute"
	TermContextSplit    = "context_parallel"
	TermOptimizerOverCP = "optimizer_over_cp"
	TermGTPRemat        = "gtp_remat"
	TermExpertGTPRemat  = "expt_gtp_remat"

	TermSequenceParallel   = "sequence_parallel"
	TermLayerShape         = "layer_shape"
	TermTorchRMSNorm       = "torch_rmsnorm"
	TermAttentionScores    = "attention_scores"
	TermScoresGrad         = "attention_scores_grad"
	TermMoEActivations     = "moe_activations"
	TermRecomputeModules   = "recompute_modules"
	TermFrozenActivations  = "frozen_activations"
	TermFrozenWeights      = "frozen_weights"
	TermGradBufferDtype    = "grad_buffer_dtype"
	TermFP8Weights         = "fp8_weights"
	TermFP8Activations     = "fp8_activations"
	TermInFlight           = "microbatches_in_flight"
	TermOptimizerStep      = "optimizer_step"
	TermOptimizerStepSlack = "optimizer_step_slack"
	TermMainGradCopy       = "main_grad_copy"
)

// adjust adds the terms for what Megatron's formula ignores but the layout
// and the stack decide. Activation terms are differences of the same
// formula on adjusted arguments, applied one after another, so that each
// names one difference and their sum is mimoplan's figure.
func adjust(e *Estimate, c *Config, p *Parallel, t *Training, w weights, formula string, a actArgs) {
	prev := e.Megatron.ActivationBytes
	working := 0.0 // full recompute's one recomputed chunk, outside the formula
	step := func(name, why string) {
		v := activation(formula, a) + working
		if d := v - prev; d != 0 {
			e.Add(Term{Name: name, Part: PartActivations, Bytes: d, Why: why})
		}
		prev = v
	}
	// units turns one rank's bytes into the formula's per-layer units:
	// compute_activation_memory divides everything by tp at the end.
	units := func(f func(seq, mbs int) float64) func(seq, mbs int) float64 {
		return func(seq, mbs int) float64 {
			if formula == FormulaSP {
				return f(seq, mbs) * float64(p.TP)
			}
			return f(seq, mbs)
		}
	}
	if c.VocabSize == 0 && p.PP == 1 {
		a.noOutput = true
		step(TermNoOutputLayer, "an encoder has no output layer or loss, which the formula counts on the last stage")
	}
	if p.CP > 1 {
		a.seq = c.SeqLength / p.CP
		step(TermContextSplit, fmt.Sprintf("context parallelism splits each sequence over %d ranks; the formula ignores cp", p.CP))
	}
	l := newLayerShape(c, p, t)
	if l.sp && formula == FormulaNoSP {
		formula = FormulaSP
		step(TermSequenceParallel, "sequence parallelism splits every activation over tp: compute_activation_memory, which the report picks only with selective recompute")
	}
	shape := l
	shape.scores, shape.frozen, shape.noGrad = false, false, false
	a.perLayer = units(shape.perLayer(c, false))
	step(TermLayerShape, "each layer at the model's own widths (query groups, gated MLP) in place of the formula's fixed 24 or 18+4*ffn/h bytes per token and hidden unit")
	if t.TransformerImpl == ImplLocal && c.Normalization == "RMSNorm" {
		shape.normExtra = torchRMSNormExtra
		a.perLayer = units(shape.perLayer(c, false))
		step(TermTorchRMSNorm, "the local layers' torch.nn.RMSNorm computes in fp32 and keeps the fp32 input and the normalized bf16 tensor: 4 more bytes per token and hidden unit per norm")
	}
	if l.scores {
		shape.scores = true
		a.perLayer = units(shape.perLayer(c, false))
		step(TermAttentionScores, "unfused attention (local layers or attention_backend unfused) keeps each layer's softmax, its dropout and mask: 5*a*s bytes per token")
		// Backward then materializes one layer's score gradients at a time.
		working += 4 * float64(c.NumAttentionHeads) * prod(a.seq, a.seq, a.mbs) / float64(p.TP)
		step(TermScoresGrad, "backward through unfused attention holds one layer's score gradients (the softmax's output and input gradients, 2 + 2 bytes a score) at a time")
	}
	if c.NumExperts > 0 {
		a.perLayer = units(shape.perLayer(c, true))
		step(TermMoEActivations, fmt.Sprintf("MoE layers keep the router's logits, %d permuted copies of each token and the experts' MLP for each (Megatron-LM #1784)", c.MoERouterTopK))
	}
	if l.frozen {
		shape.frozen, shape.noGrad = true, l.noGrad
		a.perLayer = units(shape.perLayer(c, true))
		why := "frozen weights: linear layers keep no inputs for weight gradients"
		if l.noGrad {
			why = "a frozen encoder runs forward only: nothing before it trains, so autograd keeps none of its activations"
		}
		step(TermFrozenActivations, why)
	}
	if rc := recomputedOf(c, t); rc != (recomputed{}) && !l.noGrad {
		shape.rc = rc
		a.perLayer = units(shape.perLayer(c, true))
		step(TermRecomputeModules, fmt.Sprintf("selective recompute of %s: backward recomputes their activations from their inputs in place of keeping them", strings.Join(t.RecomputeModules, ", ")))
	}
	if t.FP8 != "" && !l.noGrad {
		shape.fp8 = true
		a.perLayer = units(shape.perLayer(c, true))
		step(TermFP8Activations, fmt.Sprintf("fp8 (%s): Transformer Engine keeps its GEMMs' inputs for backward in fp8, 1 byte in place of 2", t.FP8))
	}
	if t.RecomputeGranularity == RecomputeFull && !l.noGrad {
		full := shape.perLayer(c, true)
		ckptShape := shape
		ckpt := func(seq, mbs int) float64 {
			in := 2 * prod(seq, mbs, c.HiddenSize) // each checkpointed chunk keeps its bf16 input
			if ckptShape.sp {
				in /= float64(p.TP)
			}
			return in
		}
		n := t.RecomputeNumLayers
		perStage := max(c.NumLayers/max(p.PP*max(p.VPP, 1), 1), 1)
		var chunk float64 // layers recomputed together
		if t.RecomputeMethod == RecomputeBlock {
			f := min(float64(n)/float64(perStage), 1)
			a.perLayer = units(func(seq, mbs int) float64 { return f*ckpt(seq, mbs) + (1-f)*full(seq, mbs) })
			chunk = 1
		} else {
			a.perLayer = units(func(seq, mbs int) float64 { return ckpt(seq, mbs) / float64(n) })
			chunk = float64(min(n, perStage))
		}
		ws := shape
		ws.scores = t.unfusedAttention()
		working = chunk * ws.perLayer(c, true)(a.seq, a.mbs)
		step(TermFullRecompute, fmt.Sprintf("full recompute (%s, %d) keeps each chunk's input and, in backward, one chunk's activations; the formula counts every activation", t.RecomputeMethod, n))
	}
	if n := t.MicrobatchesInFlight; n > 1 && p.PP == 1 {
		e.Add(Term{Name: TermInFlight, Part: PartActivations, Bytes: float64(n-1) * prev,
			Why: fmt.Sprintf("the schedule around the module keeps %d micro-batches' activations at once", n)})
	}

	dist := t.UseDistributedOptimizer
	if dist && p.CP > 1 {
		d := (w.tpSharded + w.replicated) * (bytesPerParameter(true, p.DP*p.CP) - bytesPerParameter(true, p.DP))
		e.Add(Term{Name: TermOptimizerOverCP, Part: PartWeights, Bytes: d,
			Why: fmt.Sprintf("the distributed optimizer shards over dp x cp = %d ranks, not dp = %d", p.DP*p.CP, p.DP)})
	}
	if g := p.GTPRemat; g > 1 {
		held := w.tpSharded * bytesPerParameter(dist, p.DP*p.CP)
		d := held*(1/float64(g)-1) + 2*w.tpShardedLayer
		e.Add(Term{Name: TermGTPRemat, Part: PartWeights, Bytes: d,
			Why: fmt.Sprintf("gtp_remat %d keeps 1/%d of each tensor-parallel weight and gathers one layer's bf16 weights at a time", g, g)})
	}
	if g := p.ExptGTPRemat; g > 1 && w.expertSharded > 0 {
		held := w.expertSharded * bytesPerParameter(dist, w.expertDP)
		e.Add(Term{Name: TermExpertGTPRemat, Part: PartWeights, Bytes: held * (1/float64(g) - 1),
			Why: fmt.Sprintf("expt_gtp_remat %d keeps 1/%d of each expert weight", g, g)})
	}
	// Before the step's terms: the last stage's loss and deferred buffers
	// are freed before the step's copies, which weigh against every
	// activation.
	lastStage(e, c, p, t, a.vocab, l.noGrad)
	stackWeights(e, p, t, w)
}

// stackWeights adds the weight terms of the stack's choices: the gradient
// buffer's dtype, frozen weights, fp8 copies and the torch optimizer's
// step.
func stackWeights(e *Estimate, p *Parallel, t *Training, w weights) {
	// gtp_remat keeps 1/g of the tensor-parallel weights and their gradients.
	held := w.tpSharded/float64(max(p.GTPRemat, 1)) + w.replicated + w.expertSharded/float64(max(p.ExptGTPRemat, 1))
	switch {
	case t.Frozen:
		d := 2*held - e.WeightAndOptimizerBytes()
		e.Add(Term{Name: TermFrozenWeights, Part: PartWeights, Bytes: d,
			Why: "frozen: bf16 weights only, no gradient buffer or optimizer state"})
		return
	case t.GradReduceInBF16:
		e.Add(Term{Name: TermGradBufferDtype, Part: PartWeights, Bytes: -2 * held,
			Why: "grad_reduce_in_fp32 off: the gradient buffer is bf16 (2 bytes a parameter), the formula counts fp32"})
	}
	optimizerStateDtype(e, p, t, w)
	// With fp8_param_gather the fp8 weight and its transpose are the
	// compute weight: Megatron keeps no bf16 copy (arguments.py:2016-2018,
	// "Keep the compute param in fp8 (do not use any other intermediate
	// dtype)"), so the 2 bytes replace the formula's bf16 2.
	if t.FP8 != "" && !t.FP8ParamGather {
		linear := w.tpSharded - w.embeddingShard + w.expertSharded
		e.Add(Term{Name: TermFP8Weights, Part: PartWeights, Bytes: 2 * linear,
			Why: fmt.Sprintf("fp8 (%s): Transformer Engine keeps an fp8 copy of each linear weight and its transpose (1 + 1 bytes a parameter) beside the bf16 weight", t.FP8)})
	}
	grads := mainGradCopy(p, t, w)
	if d := grads - e.ActivationBytes(); d > 0 && !t.torchAdam() {
		e.Add(Term{Name: TermMainGradCopy, Part: PartWeights, Bytes: d,
			Why: "the distributed optimizer's step gives each fp32 main-parameter shard an fp32 copy of its bf16 gradient shard (4 bytes a parameter over dp), after the activations are freed: the peak is the larger of the two"})
	}
	if t.torchAdam() {
		updated := held
		if t.UseDistributedOptimizer {
			updated = w.optimizerShard(p)
		}
		// The step's peak is the copy and, where it is the peak, the
		// allocator's reserve above it; the larger of that and the
		// activations' peak counts (so the figure never falls as the
		// activations grow).
		// torch's copy is taken beside the main gradients' (step-time peaks
		// both).
		copyBytes := 4*updated + grads
		d := copyBytes - e.ActivationBytes()
		withSlack := copyBytes*(1+TorchAdamSlackFraction) - e.ActivationBytes()
		if d > 0 {
			e.Add(Term{Name: TermOptimizerStep, Part: PartWeights, Bytes: d,
				Why: "torch's AdamW (no Transformer Engine or Apex) takes a temporary fp32 copy of the parameters it updates in its step, after the activations are freed: the peak is the larger of the two"})
		}
		if withSlack > 0 && !t.ExpandableSegments {
			e.Add(Term{Name: TermOptimizerStepSlack, Part: PartOverhead, Bytes: withSlack - max(d, 0),
				Why: fmt.Sprintf("torch's foreach AdamW allocates its temporaries tensor by tensor; at a peak that is the step, the allocator reserved %.0f%% of the copy above it (measured 29%% to 79%%)", 100*TorchAdamSlackFraction)})
		}
	}
}

// mainGradCopy is what the distributed optimizer allocates in its step
// when the gradient buffer is bf16: DistributedOptimizer.
// _copy_model_grads_to_main_grads sets each fp32 main-parameter shard's
// grad to shard_model_grad.float() (megatron/core/optimizer/
// distrib_optimizer.py:2792 at d98e8a6), a new fp32 tensor of the rank's
// shard (dp x cp ranks for dense parameters, expert dp for experts), held
// until the next zero_grad. With fp32 gradient buffers .float() is the
// buffer itself; the precision-aware optimizer reads the bf16 shard as it
// is (decoupled_grad, :2784-2790).
func mainGradCopy(p *Parallel, t *Training, w weights) float64 {
	if !t.UseDistributedOptimizer || !t.GradReduceInBF16 || t.Frozen || t.UsePrecisionAwareOptimizer {
		return 0
	}
	return 4 * w.optimizerShard(p)
}

// optimizerShard is the parameters of the distributed optimizer's shard on
// a rank: of what the rank holds after gtp_remat's shards, dense ones over
// dp x cp, experts over expert dp. gtp_remat's peers are outside the
// group the buffers shard over (the per-bucket collective runs over the
// GTP-excluded replicate group: megatron/core/distributed/
// distributed_data_parallel.py:234-240 at d98e8a6).
func (w weights) optimizerShard(p *Parallel) float64 {
	return (w.tpSharded/float64(max(p.GTPRemat, 1))+w.replicated)/float64(max(p.DP*p.CP, 1)) +
		w.expertSharded/float64(max(p.ExptGTPRemat, 1))/float64(max(w.expertDP, 1))
}
