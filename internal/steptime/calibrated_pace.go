package steptime

// pace is the busiest pipeline stage's work over an even stage's: the
// pipeline goes at that stage's pace. Megatron's default split puts the
// layers evenly on the stages and the output layer on the last, beside its
// share; an uneven split (Module.Imbalance) puts more layers on its
// busiest stage, and may take some off the last (Module.LastShort:
// account_for_loss_in_pipeline_split counts the loss as a layer,
// Megatron-LM transformer_config.py, and a pipeline layout's L stage holds
// what it states), which the output layer's work then fills.
//
// flush is the deferred output-layer work the pipeline flush exposes, on
// the same scale (deferral).
func (c *Calibrated) pace(s *Shape, m *Module, bound bool) (steady, flush float64) {
	pp := float64(max(1, m.PP))
	if pp == 1 {
		return 1, 0
	}
	lg := min(s.Dims.LogitsFLOPsPerSample, s.FLOPsPerSample)
	layers := s.FLOPsPerSample - lg
	last := max(0, 1-m.LastShort) * layers / pp
	share, flush := c.deferral(m, lg, layers/pp, bound)
	busiest := max(max(1, m.Imbalance)*layers/pp, last+lg-share*lg/3)
	even := s.FLOPsPerSample / pp
	return busiest / even, flush / even
}

// deferral is defer_embedding_wgrad_compute's move of the output layer's
// weight-gradient GEMM (one of its three passes) out of the last stage's
// backward passes: the first wgrad_deferral_limit micro-batches of a step
// (0: every one) keep their inputs and output gradients
// (megatron/core/tensor_parallel/layers.py:660-664 at d98e8a6), and
// the pipelined schedules run their GEMMs after the last stage's last
// backward pass (finish_embedding_wgrad_compute, schedules.py:2084 and
// :2486; the drain, megatron/core/utils.py:1282-1366), while the earlier
// stages still run their cool-down backward passes: (pp-1)/vpp backward
// passes of a stage's chunk (Narayanan et al. 2021, sec. 2.2: the bubble's
// backward half). share is the deferred micro-batches' share of the
// step's; flush the deferred work beyond that wait, per micro-batch, in
// FLOPs per sample as pace counts them (the wait read at an even stage's
// layers, stage, the stages before the last). The lower bound takes the
// least any micro-batch count gives: every micro-batch deferred, no flush.
func (c *Calibrated) deferral(m *Module, lg, stage float64, bound bool) (share, flush float64) {
	limit := c.Train.WgradDeferralLimit
	if !c.Train.DeferEmbeddingWgradCompute || lg == 0 || limit < 0 {
		return 0, 0
	}
	if bound {
		return 1, 0
	}
	mb := float64(max(1, m.Microbatches))
	deferred := mb
	if limit > 0 {
		deferred = min(float64(limit), mb)
	}
	wait := float64(m.PP-1) / float64(max(1, m.VPP)) * stage * 2 / 3
	return deferred / mb, max(0, deferred*lg/3-wait) / mb
}
