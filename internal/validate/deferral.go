package validate

import (
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/model"
)

// deferral reports what ModelParallelConfig refuses of the output layer's
// deferred weight gradient (model.CheckDeferral), on every target: every
// TransformerConfig runs the check, Megatron-LM's on the language
// module's pp (args.pipeline_model_parallel_size is --llm-pp,
// pretrain_mimo.py:49), a Megatron-core MIMO's on the language model's
// config. Megatron-Bridge's llava example sets the fields after building
// the config, so the check does not run there, and what it guards is
// lost silently: without a pipeline no schedule drains the deferred
// GEMMs (only the two pipelined schedules call
// finish_embedding_wgrad_compute, schedules.py:2084, :2486 at d98e8a6),
// and without the fusion the drain computes nothing (utils.py:1325). Only
// the language module has an output layer, so pp is its own; with its
// sizes unsound the pp is not checked.
func (c *checker) deferral() {
	lt := c.l.Training
	if lt == nil || !lt.DeferEmbeddingWgradCompute {
		return
	}
	pp := 0
	for _, m := range c.sized {
		if m != nil && m.Name == grid.LanguageModule {
			pp = m.PP
		}
	}
	c.trainingViolations(model.CheckDeferral(lt.Model(), pp))
}
