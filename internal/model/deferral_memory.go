package model

import "fmt"

// TermDeferredWgrad is what defer_embedding_wgrad_compute keeps on the last
// pipeline stage until the flush.
const TermDeferredWgrad = "deferred_output_wgrad"

// deferredWgrad adds the output layer's deferred weight-gradient inputs:
// for each deferred micro-batch (the first wgrad_deferral_limit of a step,
// every one at 0) the layer's input (megatron/core/tensor_parallel/
// layers.py:1227-1232 at d98e8a6: seq/cp tokens of the micro-batch, over
// tp with sequence parallelism, hidden wide) and its output gradient
// (:657-662: the same tokens, vocab/tp wide, cast to the input's bf16),
// held until the flush runs their GEMMs (schedules.py:2084, :2486). They
// sit on the last stage beside the one micro-batch 1F1B keeps in flight
// there, where the formula's first stage keeps pp: the busiest GPU grows
// only by what they hold beyond the first stage's other pp-1 micro-batches.
func deferredWgrad(e *Estimate, c *Config, p *Parallel, t *Training, vocab int) {
	if !t.DeferEmbeddingWgradCompute || p.PP < 2 || vocab == 0 {
		return
	}
	k := t.NumMicrobatches
	if l := t.WgradDeferralLimit; l > 0 && (k == 0 || l < k) {
		k = l
	}
	if k <= 0 {
		return
	}
	tokens := float64(c.SeqLength) / float64(max(1, p.CP)) * float64(max(1, t.MicroBatchSize))
	input := tokens * float64(c.HiddenSize)
	if t.SequenceParallel {
		input /= float64(max(1, p.TP))
	}
	grad := tokens * float64(vocab) / float64(max(1, p.TP))
	held := float64(k) * (input + grad) * 2
	pp := float64(p.PP)
	if d := held - e.ActivationBytes()*(pp-1)/pp; d > 0 {
		e.Add(Term{Name: TermDeferredWgrad, Part: PartActivations, Bytes: d,
			Why: fmt.Sprintf("defer_embedding_wgrad_compute keeps the output layer's input and output gradient of %d micro-batches (%.2f GiB) on the last pipeline stage until the flush, beyond what the first stage holds (wgrad_deferral_limit caps how many)", k, held/(1<<30))})
	}
}
