package steptime

// Analytic is the step-time model of docs/suggest.md: compute at a fixed
// efficiency of the peak, the pipeline bubble of the 1F1B schedules, and
// each parallelism's communication at the bandwidth its groups get, none
// of it overlapped.
type Analytic struct {
	HW  Hardware
	Job Job
}

// New is the analytic model of hardware hw for job j.
func New(hw Hardware, j Job) *Analytic { return &Analytic{HW: hw, Job: j} }

// inNode reports whether every group whose members are stride apart, size
// of them, stays inside one node for a module at offset: the module fits
// in one node, or the groups tile whole nodes from an aligned start.
func (a *Analytic) inNode(offset, n, stride, size int) bool {
	if size < 2 {
		return true
	}
	gpn := a.Job.GPUsPerNode
	if gpn == 0 || offset/gpn == (offset+n-1)/gpn {
		return true
	}
	block := stride * size
	return block <= gpn && gpn%block == 0 && offset%block == 0
}

// OffsetClass: inNode reads only the offset's place inside a node.
func (a *Analytic) OffsetClass(offset int) int {
	if a.Job.GPUsPerNode == 0 {
		return 0
	}
	return offset % a.Job.GPUsPerNode
}

func (a *Analytic) bw(local bool) float64 {
	if local {
		return a.HW.NVLink
	}
	return a.HW.Network
}

// Compute is the module's FLOPs spread evenly over its GPUs at the
// model's efficiency.
func (a *Analytic) Compute(s *Shape, n int) float64 {
	return s.FLOPsPerSample * float64(a.Job.Samples) / (float64(n) * a.HW.PeakFLOPs * a.HW.Efficiency)
}

// Time is the model of docs/suggest.md for one module.
func (a *Analytic) Time(s *Shape, c Module) Parts {
	var t Parts
	if s.FLOPsPerSample == 0 {
		return t
	}
	const bf16, fp32 = 2, 4
	n := c.Ranks
	lanes := float64(c.DP * c.GTPRemat)
	// The busiest stage of an uneven split paces every micro-batch:
	// its compute and its per-layer traffic grow by the imbalance.
	imb := max(1, c.Imbalance)
	t.Compute = a.Compute(s, n) * imb
	v := max(1, c.VPP)
	// Narayanan et al. 2021, eq. for the interleaved 1F1B bubble: the
	// bubble is (pp-1)/(m*vpp) of the ideal time, (pp-1)/(m*vpp+pp-1) of
	// the step.
	t.Bubble = t.Compute * float64(c.PP-1) / float64(c.Microbatches*v)
	// Work per GPU: samples per data lane times the layers of one stage.
	perLane := float64(a.Job.Samples) / lanes
	layers := perLane * float64(s.Layers) / float64(c.PP) * imb
	tokens := float64(s.Seq) / float64(c.CP)
	// Korthikanti et al. 2022, sec. 4.2.2: per layer, two all-reduces
	// forward and two backward over tp (with sequence parallelism the same
	// volume as all-gathers and reduce-scatters); a ring all-reduce moves
	// 2(t-1)/t of the buffer per GPU.
	if c.TP > 1 {
		vol := layers * 4 * 2 * frac(c.TP) * tokens * float64(s.Hidden) * bf16
		t.TP = vol / a.bw(a.inNode(c.Offset, n, 1, c.TP))
	}
	// Context parallelism: an all-gather of K and V forward and a
	// reduce-scatter of their gradients backward, per layer.
	if c.CP > 1 {
		vol := layers * 2 * frac(c.CP) * float64(s.Seq) * 2 * float64(s.KVDim) * bf16
		t.CP = vol / a.bw(a.inNode(c.Offset, n, c.TP*c.GTPRemat, c.CP))
	}
	// Expert parallelism: dispatch and combine all-to-alls, forward and
	// backward, of every routed token copy, per MoE layer.
	if c.EP > 1 && s.MoELayers > 0 {
		moe := perLane * float64(s.MoELayers) / float64(c.PP)
		vol := moe * 4 * frac(c.EP) * tokens * float64(s.TopK) * float64(s.Hidden) * bf16
		t.EP = vol / a.bw(a.inNode(c.Offset, n, c.ExptTP, c.EP))
	}
	// Pipeline: each micro-batch's activations cross every stage boundary
	// of every virtual stage, forward and backward.
	if c.PP > 1 {
		vol := perLane * 2 * float64(v) * tokens * float64(s.Hidden) / float64(c.TP) * bf16
		t.PP = vol / a.bw(a.inNode(c.Offset, n, n/c.PP, c.PP))
	}
	// Data parallelism: a ring all-reduce of the FP32 gradients (Megatron's
	// default main_grads_dtype), not overlapped with compute.
	if c.DP > 1 {
		vol := 2 * frac(c.DP) * c.Params * fp32
		t.DP = vol / a.bw(a.inNode(c.Offset, n, c.TP*c.GTPRemat*c.CP, c.DP))
	}
	t.Total = t.Compute + t.Bubble + t.TP + t.CP + t.EP + t.PP + t.DP
	return t
}

// frac is (k-1)/k, the share of a buffer a ring collective moves per GPU.
func frac(k int) float64 { return float64(k-1) / float64(k) }

// Fastest is a with every group inside a node at the faster of the two
// bandwidths.
func (a *Analytic) Fastest() Model {
	k := a.fastest()
	return &k
}

func (a *Analytic) fastest() Analytic {
	k := *a
	k.Job.GPUsPerNode = 0
	k.HW.NVLink = max(a.HW.NVLink, a.HW.Network)
	return k
}

// LowerBound is the time with every group inside a node at the faster
// bandwidth, without the pipeline bubble and the gradients' all-reduce.
func (a *Analytic) LowerBound(s *Shape, c Module) float64 {
	c.Microbatches, c.Params = 1, 0
	f := a.fastest()
	t := f.Time(s, c)
	return t.Total - t.Bubble
}
