package steptime_test

import (
	"math"
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
		{RecomputeGranularity: model.RecomputeFull, RecomputeMethod: "block", RecomputeNumLayers: 2, MoETokenDispatcherType: "flex", GradReduceInBF16: true, NoOverlapP2PComm: true},
		{RecomputeGranularity: model.RecomputeSelective, TransformerImpl: "local", UseDistributedOptimizer: true},
		{RecomputeGranularity: model.RecomputeFull, TransformerImpl: "local", AttentionBackend: "local"},
		{TransformerImpl: "local", AttentionBackend: "flash", SequenceParallel: true, MoETokenDispatcherType: "alltoall"},
		{DeferEmbeddingWgradCompute: true, SequenceParallel: true, TPCommOverlap: true},
		{DeferEmbeddingWgradCompute: true, WgradDeferralLimit: 3, RecomputeGranularity: model.RecomputeFull},
		// Capacity below the even share drops routed tokens; padded above
		// it, experts compute more; selective recompute of submodules.
		{MoETokenDispatcherType: "alltoall", MoEExpertCapacityFactor: 0.5},
		{MoETokenDispatcherType: "alltoall", MoEExpertCapacityFactor: 1.5, MoEPadExpertInputToCapacity: true, SequenceParallel: true},
		{RecomputeGranularity: model.RecomputeSelective, RecomputeModules: []string{"mla_up_proj", "mlp", "moe", "shared_experts"}, MoETokenDispatcherType: "alltoall"},
		{RecomputeGranularity: model.RecomputeSelective, RecomputeModules: []string{"moe"}, TransformerImpl: "local", MoEExpertCapacityFactor: 0.8, MoEPadExpertInputToCapacity: true, MoETokenDispatcherType: "alltoall"},
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
		LayerTensors: 12, ExpertTensors: 2, OuterTensors: 4, Gated: s.Layers%2 == 0,
		// An output layer from a tenth of the FLOPs to more than a
		// stage's layers (pace, deferral).
		LogitsFLOPsPerSample: s.FLOPsPerSample * min(0.9, 0.1+2/float64(max(1, s.Layers)))}
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

// TestPPCommOverlap: overlap_p2p_comm hides all but PPExposed of the
// interleaved schedule's sends; with it off (training.overlap_p2p_comm:
// false) they are all exposed, and without interleaving it changes
// nothing (Megatron-LM turns the overlap off there).
func TestPPCommOverlap(t *testing.T) {
	s := &steptime.Shape{FLOPsPerSample: 1e13, Layers: 32, Hidden: 4096, Seq: 4096, KVDim: 1024}
	j := steptime.Job{GPUsPerNode: 8, Samples: 256, MicroBatch: 1}
	on := steptime.NewCalibrated(steptime.Devices["H100"], j, model.Training{})
	off := steptime.NewCalibrated(steptime.Devices["H100"], j, model.Training{NoOverlapP2PComm: true})
	tests := []struct {
		name    string
		m       steptime.Module
		exposed float64 // off's sends over on's
	}{
		{"interleaved across nodes", steptime.Module{Ranks: 64, TP: 8, PP: 8, VPP: 2, DP: 1, Microbatches: 256}, 1 / steptime.Fitted.PPExposed},
		{"interleaved in a node", steptime.Module{Ranks: 8, TP: 2, PP: 4, VPP: 4, DP: 1, Microbatches: 256}, 1 / steptime.Fitted.PPExposed},
		{"no interleaving", steptime.Module{Ranks: 64, TP: 8, PP: 8, VPP: 1, DP: 1, Microbatches: 256}, 1},
		{"no pipeline", steptime.Module{Ranks: 8, TP: 8, PP: 1, DP: 1, Microbatches: 256}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := on.Time(s, tt.m), off.Time(s, tt.m)
			if tt.m.PP > 1 && a.PP <= 0 {
				t.Fatalf("no pipeline sends charged: %+v", a)
			}
			if tt.m.PP == 1 {
				if a != b || a.PP != 0 {
					t.Fatalf("pp 1: %+v and %+v", a, b)
				}
				return
			}
			if got := b.PP / a.PP; math.Abs(got-tt.exposed) > 1e-9*tt.exposed {
				t.Errorf("sends without the overlap / with it = %g, want %g (%+v, %+v)", got, tt.exposed, a, b)
			}
			if a.Total-a.PP != b.Total-b.PP {
				t.Errorf("only the sends change: %+v, %+v", a, b)
			}
		})
	}
}
