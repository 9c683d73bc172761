package steptime_test

import (
	"testing"

	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/steptime/steptimetest"
)

// TestCalibratedConforms: the calibrated model keeps every inequality the
// search's bounds rely on, under each setting that changes a term.
func TestCalibratedConforms(t *testing.T) {
	trainings := []model.Training{
		{},
		{UseDistributedOptimizer: true, OverlapGradReduce: true, OverlapParamGather: true, SequenceParallel: true, TPCommOverlap: true},
		{RecomputeGranularity: model.RecomputeFull, MoETokenDispatcherType: "alltoall", OverlapMoEExpertParallelComm: true, FP8: "hybrid"},
		{RecomputeGranularity: model.RecomputeFull, RecomputeMethod: "block", RecomputeNumLayers: 2, MoETokenDispatcherType: "flex", GradReduceInBF16: true},
		{RecomputeGranularity: model.RecomputeSelective, TransformerImpl: "local", UseDistributedOptimizer: true},
		{RecomputeGranularity: model.RecomputeFull, TransformerImpl: "local", AttentionBackend: "local"},
		{TransformerImpl: "local", AttentionBackend: "flash", SequenceParallel: true, MoETokenDispatcherType: "alltoall"},
	}
	rounds := 300
	if testing.Short() {
		rounds = 40
	}
	for _, dev := range []string{"A100", "H100", "B200"} {
		for _, j := range []steptime.Job{{GPUsPerNode: 8, Samples: 1024, MicroBatch: 1}, {Samples: 64, MicroBatch: 4, Bridge: true}, {GPUsPerNode: 4, Samples: 4096, MicroBatch: 2}} {
			for i, tr := range trainings {
				m := steptime.NewCalibrated(steptime.Devices[dev], j, tr)
				if err := steptimetest.TestModel(m, uint64(i+1), rounds); err != nil {
					t.Errorf("%s, job %+v, training %d: %v", dev, j, i, err)
				}
				if err := steptimetest.TestModel(withDims{m}, uint64(i+7), rounds); err != nil {
					t.Errorf("%s, job %+v, training %d, with dims: %v", dev, j, i, err)
				}
			}
		}
	}
}

// withDims gives the checker's shapes the Dims of a MoE model with
// attention (the checker draws Shape's totals only), so that the expert
// and attention terms are checked too.
type withDims struct{ m steptime.Model }

func (w withDims) shape(s *steptime.Shape) *steptime.Shape {
	c := *s
	c.Dims = steptime.Dims{FFN: 4 * s.Hidden, MoEFFN: s.Hidden / 2, Experts: 64,
		AttnFLOPsPerSample: 0.2 * s.FLOPsPerSample, DenseParams: 1e9 * float64(s.Layers),
		LayerTensors: 12, ExpertTensors: 2, OuterTensors: 4}
	if s.MoELayers > 0 {
		c.Dims.ExpertFLOPsPerSample = 0.5 * s.FLOPsPerSample
		c.Dims.ExpertParams = 4e9 * float64(s.MoELayers)
	}
	return &c
}

func (w withDims) Time(s *steptime.Shape, m steptime.Module) steptime.Parts {
	return w.m.Time(w.shape(s), m)
}
func (w withDims) Compute(s *steptime.Shape, n int) float64 { return w.m.Compute(w.shape(s), n) }
func (w withDims) LowerBound(s *steptime.Shape, m steptime.Module) float64 {
	return w.m.LowerBound(w.shape(s), m)
}
func (w withDims) OffsetClass(offset int) int { return w.m.OffsetClass(offset) }
func (w withDims) Fastest() steptime.Model    { return withDims{w.m.Fastest()} }
