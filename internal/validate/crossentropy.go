package validate

import (
	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// teCrossEntropy reports Transformer Engine's fused loss
// (cross_entropy_loss_fusion with cross_entropy_fusion_impl te), which
// Megatron-LM PR #5115 disabled for its stability. Megatron-LM's
// validate_args asserts against it since (arguments.py:1697-1702 at
// d98e8a6): target megatron-lm. ModelParallelConfig asserted too
// (model_parallel_config.py:437-440 at 168cb15d70) until PR #5162 made
// that a warning (:536-543 at d98e8a6); targets core and megatron-bridge,
// which build their configs without validate_args, get the warning.
// testdata/te-cross-entropy-megatron.json holds ModelParallelConfig's
// verdicts at the three commits, testdata/te-cross-entropy-args-megatron.json
// validate_args' at d98e8a6.
func (c *checker) teCrossEntropy() {
	lt := c.l.Training
	if lt == nil || !lt.CrossEntropyLossFusion || lt.CrossEntropyFusionImpl != "te" {
		return
	}
	v := c.l.TargetVersion
	if !v.Has(upstream.PRTECrossEntropyOff) {
		return
	}
	pos := c.l.Pos("training.cross_entropy_fusion_impl")
	const hint = "set cross_entropy_fusion_impl: native (Megatron's fused loss), or remove cross_entropy_loss_fusion"
	switch {
	case c.l.Target == layout.TargetMegatronLM:
		c.d.Add(diag.RuleTECrossEntropyDisabled, pos, "", hint,
			"cross_entropy_fusion_impl te with cross_entropy_loss_fusion: Megatron-LM's validate_args refuses Transformer Engine's fused loss since PR #5115 (\"disabled due to stability issues\", megatron/training/arguments.py:1697-1702 at d98e8a6)")
	case !v.Has(upstream.PRTECrossEntropyWarn):
		c.d.Add(diag.RuleTECrossEntropyDisabled, pos, "", hint+", or give a target_version before 2026-06-03 (Megatron-LM PR #5115)",
			"cross_entropy_fusion_impl te with cross_entropy_loss_fusion: ModelParallelConfig asserts against Transformer Engine's fused loss from PR #5115 until PR #5162 (megatron/core/model_parallel_config.py:437-440 at 168cb15d70)")
	default:
		c.d.Add(diag.RuleTECrossEntropyUnstable, pos, "", hint,
			"cross_entropy_fusion_impl te with cross_entropy_loss_fusion: ModelParallelConfig warns that Transformer Engine's fused loss \"has known stability issues\" (megatron/core/model_parallel_config.py:536-543 at d98e8a6); Megatron-LM's own arguments refuse it")
	}
}
