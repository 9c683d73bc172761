package layout

import "github.com/mimoplan/mimoplan/internal/model"

// InterleavedVPP is the virtual pipeline size module m runs the
// interleaved schedule with at pp stages: its vpp, or its
// pipeline_model_parallel_layout's stages / pp (model.VirtualPipeline);
// 0 when it runs none (pp 1, a virtual size of 1, or a layout that
// pipeline-layout-invalid refuses, whose floor is not taken so that
// nothing else cascades from that refusal).
func InterleavedVPP(m *Module, pp int) int {
	if pp < 2 {
		return 0
	}
	v, exact := model.VirtualPipeline(m.VPP, pp, m.Split.Layout)
	if !exact {
		return 0
	}
	return v
}

// OverlapP2PComm is the overlap_p2p_comm module m runs with at pp stages,
// as Megatron-LM's validate_args settles it: the training block's (true
// unless stated false) under a virtual pipeline, false without one
// (arguments.py:1010-1012 at d98e8a6).
func (l *Layout) OverlapP2PComm(m *Module, pp int) bool {
	return (l.Training == nil || !l.Training.NoOverlapP2PComm) && InterleavedVPP(m, pp) > 0
}
