package validate

import (
	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// mimoSplit reports the language module's split keys that Megatron-LM's
// MIMO example refuses: from PR #5602 its pretrain_mimo.py builds the
// language model only from --hybrid-layer-pattern, beside which
// validate_args asserts no --pipeline-model-parallel-layout and no
// --account-for-*-in-pipeline-split, whatever the pp
// (megatron/training/arguments.py:825-838 at d98e8a6;
// testdata/mimo-vpp-megatron.json ran them). A layout of more stages than
// pp is mimo-vpp-unsupported's. decoder_first/last_pipeline_num_layers
// pass beside a pattern without '|' (the fixture's lm-first-last).
func (c *checker) mimoSplit() {
	if !c.l.TargetVersion.Has(upstream.PRDistOpt) {
		return
	}
	for i, m := range c.sized {
		if m == nil || m.Name != grid.LanguageModule {
			continue
		}
		lm := c.lm(i)
		s := lm.Split
		for _, k := range []struct {
			key, flag, line string
			set             bool
		}{
			{"pipeline_model_parallel_layout", "--pipeline-model-parallel-layout", ":825", s.Layout != "" && layout.InterleavedVPP(lm, m.PP) == 0},
			{"account_for_embedding_in_pipeline_split", "--account-for-embedding-in-pipeline-split", ":829", s.AccountEmbedding},
			{"account_for_loss_in_pipeline_split", "--account-for-loss-in-pipeline-split", ":834", s.AccountLoss},
		} {
			if !k.set {
				continue
			}
			c.d.Add(diag.RuleMIMOSplitUnsupported, c.modelPos(lm, k.key), m.Name,
				"drop "+k.key+"; decoder_first/last_pipeline_num_layers split the pp stages unevenly, or target core",
				"%s is written as %s, which Megatron-LM's MIMO example refuses beside the language model's --hybrid-layer-pattern, its only way to build it (megatron/training/arguments.py%s at d98e8a6: \"should not be used with --hybrid-layer-pattern\")",
				k.key, k.flag, k.line)
		}
	}
}
