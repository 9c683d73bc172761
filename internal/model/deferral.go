package model

import "fmt"

// Rule ids of the output layer's deferred weight gradient.
const (
	RuleDeferWgradNeeds       = "defer-embedding-wgrad-needs"
	RuleWgradDeferralNegative = "wgrad-deferral-limit-negative"
)

// CheckDeferral returns what ModelParallelConfig refuses of
// defer_embedding_wgrad_compute (model_parallel_config.py:545-558 at
// d98e8a6), in its order, every problem at once: deferring without a
// pipeline (pp, the language module's; 0 when unknown, then not checked),
// without gradient_accumulation_fusion, or with a negative
// wgrad_deferral_limit. testdata/defer-wgrad-megatron.json
// (scripts/gen-defer-wgrad-fixtures.py) holds upstream's verdicts.
func CheckDeferral(tr Training, pp int) []Violation {
	if !tr.DeferEmbeddingWgradCompute {
		return nil
	}
	const key = "training.defer_embedding_wgrad_compute"
	var out []Violation
	if pp == 1 {
		out = append(out, Violation{Rule: RuleDeferWgradNeeds, Key: key,
			Message: "defer_embedding_wgrad_compute with the language module at pp 1: the output layer's weight gradients are deferred to the pipeline flush, and without a pipeline there is none",
			Hint:    "use pp 2 or more for the language module, or remove defer_embedding_wgrad_compute"})
	}
	if tr.NoGradientAccumulationFusion {
		out = append(out, Violation{Rule: RuleDeferWgradNeeds, Key: key,
			Message: "defer_embedding_wgrad_compute with gradient_accumulation_fusion false: the flush accumulates the deferred weight gradients with the fused kernel alone",
			Hint:    "remove gradient_accumulation_fusion: false (Megatron-LM's default is true), or remove defer_embedding_wgrad_compute"})
	}
	if tr.WgradDeferralLimit < 0 {
		out = append(out, Violation{Rule: RuleWgradDeferralNegative, Key: "training.wgrad_deferral_limit",
			Message: fmt.Sprintf("wgrad_deferral_limit is %d while deferring: Megatron wants 0 (every micro-batch) or more", tr.WgradDeferralLimit),
			Hint:    "set wgrad_deferral_limit to 0 (defer every micro-batch) or to the number of micro-batches to defer"})
	}
	return out
}
