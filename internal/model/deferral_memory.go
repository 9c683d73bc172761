package model

import "fmt"

// Term names of what the last pipeline stage holds beyond its layers.
const (
	// TermLastStageLogits is the loss's logits kept for backward and the
	// output layer's input, on the last stage.
	TermLastStageLogits = "last_stage_logits"
	// TermDeferredWgrad is what defer_embedding_wgrad_compute keeps on the
	// last stage until the flush.
	TermDeferredWgrad = "deferred_output_wgrad"
)

// lastStageShare is the last pipeline stage's activations over the
// first's, the formula's figure: 1F1B keeps one micro-batch in flight on
// the last stage where the first keeps pp; the interleaved schedule's warm-up
// on the last rank is (vpp - 1) pp chunk forwards
// (megatron/core/pipeline_parallel/schedules.py:964-965 at d98e8a6), one
// more in steady state, against the formula's pp + (pp - 1)/vpp stages'
// worth on the first. With fewer micro-batches than stages the first
// holds fewer and the share is larger than this; it is kept constant so
// that the estimate never falls as the micro-batches grow.
func lastStageShare(p *Parallel) float64 {
	pp := float64(p.PP)
	if p.VPP > 1 {
		v := float64(p.VPP)
		return ((v-1)*pp + 1) / (pp*v + pp - 1)
	}
	return 1 / pp
}

// LogitBytes is what the loss keeps of each logit (a token's vocab/tp
// entry) for backward: Megatron's vocab-parallel cross entropy, unfused
// (megatron/core/tensor_parallel/cross_entropy.py:25, :61-62, :181 at
// d98e8a6) or fused (cross_entropy_fusion_impl native,
// megatron/core/fusions/fused_cross_entropy.py:119), casts the logits to
// fp32 and keeps their softmax, 4 bytes; Transformer Engine's
// (cross_entropy_fusion_impl te) wrote the gradient in place of the bf16
// logits and kept those, 2 bytes, in every release Megatron-LM accepted it
// with (TransformerEngine@e6d97ffc7 transformer_engine/pytorch/triton/
// cross_entropy.py:111, pytorch/cross_entropy.py:53, :62). TE 2.18
// (01bbe3e, #3193, 2026-07-09) keeps an fp32 gradient instead, 4 bytes,
// after Megatron-LM had refused the te fusion (PR #5115).
func (t *Training) LogitBytes() float64 {
	if t.CrossEntropyLossFusion && t.CrossEntropyFusionImpl == "te" {
		return 2
	}
	return 4
}

// lastStage adds what the last pipeline stage holds beyond its layers'
// activations where that exceeds what the first stage, Megatron's
// figure, holds more of them:
//
//   - the loss of a micro-batch in flight: its logits for backward
//     (LogitBytes a token and vocab/tp entry) and the output layer's input
//     (2 bytes a token and hidden unit, over tp with sequence
//     parallelism); the formula counts both at pp 1 only
//     (theoretical_memory_usage.py:368-376). Not where nothing before the
//     module trains (no backward), nor on an uneven split, whose busiest
//     stage busiestStage finds from the layers alone;
//   - with defer_embedding_wgrad_compute, the output layer's deferred
//     weight-gradient inputs: for each deferred micro-batch (the first
//     wgrad_deferral_limit of a step, every one at 0) its input
//     (megatron/core/tensor_parallel/layers.py:1227-1232) and its output
//     gradient (:657-662: vocab/tp wide, cast to the input's bf16), held
//     until the flush runs their GEMMs (schedules.py:2084, :2486).
func lastStage(e *Estimate, c *Config, p *Parallel, t *Training, vocab int, noGrad bool) {
	if p.PP < 2 || vocab == 0 {
		return
	}
	tokens := float64(c.SeqLength) / float64(max(1, p.CP)) * float64(max(1, t.MicroBatchSize))
	input := tokens * float64(c.HiddenSize)
	if t.SequenceParallel {
		input /= float64(max(1, p.TP))
	}
	outputs := tokens * float64(vocab) / float64(max(1, p.TP))
	gap := e.ActivationBytes() * (1 - lastStageShare(p))
	if !noGrad && !p.Split.Uneven() {
		held := t.LogitBytes()*outputs + 2*input
		if d := held - gap; d > 0 {
			e.Add(Term{Name: TermLastStageLogits, Part: PartActivations, Bytes: d,
				Why: fmt.Sprintf("the last pipeline stage keeps its micro-batch's logits for the loss's backward (%g bytes each: %s) and the output layer's input (%.2f GiB), beyond what the first stage holds more", t.LogitBytes(), t.lossName(), held/(1<<30))})
		}
		gap = max(0, gap-held)
	}
	if !t.DeferEmbeddingWgradCompute {
		return
	}
	k := t.NumMicrobatches
	if l := t.WgradDeferralLimit; l > 0 && (k == 0 || l < k) {
		k = l
	}
	if k <= 0 {
		return
	}
	held := float64(k) * (input + outputs) * 2
	if d := held - gap; d > 0 {
		e.Add(Term{Name: TermDeferredWgrad, Part: PartActivations, Bytes: d,
			Why: fmt.Sprintf("defer_embedding_wgrad_compute keeps the output layer's input and output gradient of %d micro-batches (%.2f GiB) on the last pipeline stage until the flush, beyond what the first stage holds (wgrad_deferral_limit caps how many)", k, held/(1<<30))})
	}
}

// lossName names the loss the estimate assumes, for a term's why.
func (t *Training) lossName() string {
	switch {
	case !t.CrossEntropyLossFusion:
		return "Megatron's unfused loss, an fp32 softmax"
	case t.CrossEntropyFusionImpl == "te":
		return "Transformer Engine's fused loss, the gradient in place of the bf16 logits"
	}
	return "Megatron's fused loss, an fp32 softmax"
}
