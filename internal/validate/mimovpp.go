package validate

import (
	"fmt"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// mimoVPP reports a virtual pipeline on a module that the target's MIMO
// training builds as one model chunk and runs with the non-interleaved
// schedule (testdata/mimo-vpp-megatron.json, written by
// scripts/gen-mimo-vpp-fixtures.py, ran the Megatron-LM side):
//
//   - Megatron-LM's example (megatron-lm) writes only the language
//     module's vpp or pipeline_model_parallel_layout, and its validate_args
//     refuses both beside the language model's --hybrid-layer-pattern
//     (arguments.py:820, :825); MimoModelBuilder.build_model drops
//     vp_stage (builder.py:78) and training.py:4430 gets the
//     non-interleaved schedule (schedules.py:154).
//   - Megatron-Bridge (megatron-bridge) builds every module once without a
//     vp_stage (MegatronMIMOProvider.provide), where a TransformerBlock of
//     a virtual pipeline asserts (transformer_layer.py:197), and calls the
//     non-interleaved schedule itself (train_megatron_mimo.py:108).
func (c *checker) mimoVPP(runtime string) {
	for i, m := range c.sized {
		if m == nil || (c.l.Target == layout.TargetMegatronLM && m.Name != grid.LanguageModule) {
			continue
		}
		lm := c.lm(i)
		vpp := layout.InterleavedVPP(lm, m.PP)
		if vpp == 0 {
			continue
		}
		key, what, drop := "vpp", fmt.Sprintf("vpp %d", vpp), "use vpp 1"
		if lm.Split.Layout != "" {
			key = "pipeline_model_parallel_layout"
			what = fmt.Sprintf("a pipeline_model_parallel_layout of %d stages (vpp %d)", vpp*m.PP, vpp)
			drop = fmt.Sprintf("use a pipeline_model_parallel_layout of %d stages", m.PP)
			if c.l.Target == layout.TargetMegatronLM {
				// Any layout is refused there (mimo-split-unsupported).
				drop = "drop pipeline_model_parallel_layout"
			}
		}
		why := "its validate_args refuses it beside the language model's --hybrid-layer-pattern (megatron/training/arguments.py:820, :825 at d98e8a6) and builds one model chunk (examples/mimo/training/builder.py:78) that it runs with the non-interleaved schedule (schedules.py:154)"
		if c.l.Target == layout.TargetMegatronBridge {
			why = "it builds each module once without a vp_stage, where Megatron-core asserts (megatron/core/transformer/transformer_layer.py:197 at d98e8a6), and runs the non-interleaved schedule (train_megatron_mimo.py:108 at 067f987)"
		}
		c.d.Add(diag.RuleMIMOVPPUnsupported, c.modelPos(lm, key), m.Name,
			fmt.Sprintf("%s (pp %d without interleaving), or target core", drop, m.PP),
			"%s at pp %d asks for the interleaved pipeline schedule, which %s cannot run: %s", what, m.PP, runtime, why)
	}
}
