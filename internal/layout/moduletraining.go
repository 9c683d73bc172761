package layout

import (
	"slices"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/model"
)

// Model is the training block as the model package reads it, the same
// for every module (a nil block is Megatron's defaults): ModelTraining adds
// what depends on the module and the batch.
func (lt *Training) Model() model.Training {
	if lt == nil {
		return model.Training{}
	}
	return model.Training{
		UseDistributedOptimizer: lt.UseDistributedOptimizer, SequenceParallel: lt.SequenceParallel,
		RecomputeGranularity: lt.RecomputeGranularity, RecomputeMethod: lt.RecomputeMethod,
		RecomputeNumLayers: lt.RecomputeNumLayers, RecomputeModules: slices.Clone(lt.RecomputeModules),
		OverlapGradReduce:  lt.OverlapGradReduce,
		OverlapParamGather: lt.OverlapParamGather, TPCommOverlap: lt.TPCommOverlap,
		GradReduceInBF16: lt.GradReduceInBF16, MoETokenDispatcherType: lt.MoETokenDispatcherType,
		OverlapMoEExpertParallelComm: lt.OverlapMoEExpertParallelComm, TransformerImpl: lt.TransformerImpl,
		MoEExpertCapacityFactor: lt.MoEExpertCapacityFactor, MoEPadExpertInputToCapacity: lt.MoEPadExpertInputToCapacity,
		AttentionBackend: lt.AttentionBackend, FP8: lt.FP8, FP8ParamGather: lt.FP8ParamGather,
		NoOverlapP2PComm: lt.NoOverlapP2PComm, UsePrecisionAwareOptimizer: lt.UsePrecisionAwareOptimizer,
		MainGradsDtype: lt.MainGradsDtype, MainParamsDtype: lt.MainParamsDtype,
		ExpAvgDtype: lt.ExpAvgDtype, ExpAvgSqDtype: lt.ExpAvgSqDtype,
		NoGradientAccumulationFusion: lt.NoGradientAccumulationFusion,
		DeferEmbeddingWgradCompute:   lt.DeferEmbeddingWgradCompute, WgradDeferralLimit: lt.WgradDeferralLimit,
		CrossEntropyLossFusion: lt.CrossEntropyLossFusion, CrossEntropyFusionImpl: lt.CrossEntropyFusionImpl,
	}
}

// languageOnly are the training keys the language model's config alone
// turns on; every other module runs them at Megatron's default (off).
// Sequence parallelism: Megatron-LM's MIMO providers give it to the
// language model, and encoders run without it
// (examples/mimo/model_providers/llava_vlm.py:71, radio_encoder.py:127),
// and so tp_comm_overlap, which needs it. defer_embedding_wgrad_compute
// defers the output layer's weight gradient, and only the language model
// has one (gpt_model.py:255-293 at d98e8a6); the loss's fusion and its
// kernel: only the language model computes a loss.
var languageOnly = []string{"sequence_parallel", "tp_comm_overlap", "defer_embedding_wgrad_compute",
	"cross_entropy_loss_fusion", "cross_entropy_fusion_impl"}

// ModuleTraining returns the training block as module m runs it: the
// block, with the languageOnly keys at their defaults for a module other
// than the language model. Nil without a training block. Every consumer
// (the estimate, the step-time model, the launch plans' per-module
// configs) reads a module's settings through it, so they cannot drift.
func (l *Layout) ModuleTraining(m *Module) *Training {
	if l.Training == nil {
		return nil
	}
	t := *l.Training
	if m.Name != grid.LanguageModule {
		for _, k := range trainingKeys {
			if slices.Contains(languageOnly, k.Name) {
				k.set(&t, k.Default)
			}
		}
	}
	return &t
}

// ModelTraining returns the model package's training options for module
// m of the layout: the block as m runs it (ModuleTraining), the batch, and
// the module's dp.
func (l *Layout) ModelTraining(m *Module, dp int) model.Training {
	t := l.ModuleTraining(m).Model()
	t.ExpandableSegments = l.ExpandableSegments()
	t.Frozen = m.Freeze
	t.MicroBatchSize = 1
	if l.Batch != nil {
		t.MicroBatchSize = l.Batch.MicroBatchSize
		if g := l.Batch.GlobalBatchSize; g > 0 && dp > 0 && g%(t.MicroBatchSize*dp) == 0 {
			t.NumMicrobatches = g / (t.MicroBatchSize * dp)
		}
	}
	return t
}
