package steptime

import "github.com/mimoplan/mimoplan/internal/model"

// Calibrated is the step-time model of docs/suggest.md ("the calibrated
// model"): each GEMM at an efficiency its shape gives, attention in its
// kernel, the memory-bound rest at the GPU's memory bandwidth, recompute's
// extra forward, and each parallelism's communication as Megatron sends it,
// overlapped where the layout's training block turns overlap on. The
// figures it has no data sheet for are Constants, fitted to published runs
// (testdata/calibration).
type Calibrated struct {
	Dev   Device
	Job   Job
	Train model.Training
	K     Constants
	// L: the local stack's figures, read only under transformer_impl:
	// local (local.go).
	L LocalConstants
	// fast: every group at the faster of the two bandwidths, whatever the
	// offset (Fastest).
	fast bool
}

// NewCalibrated is the calibrated model of device dev for job j under
// training settings t, with the fitted constants.
func NewCalibrated(dev Device, j Job, t model.Training) *Calibrated {
	if dev.PerNode > 0 && j.GPUsPerNode == 0 {
		// One node: every group is inside it.
		dev.PerNode = 0
	}
	return &Calibrated{Dev: dev, Job: j, Train: t, K: Fitted, L: LocalMeasured}
}

func (c *Calibrated) gemmPeak() float64 {
	if c.Train.FP8 != "" && c.Dev.FP8 > 0 {
		return c.Dev.FP8 * c.K.FP8Efficiency
	}
	return c.Dev.BF16
}

// bound is the least time a FLOP can take: the faster of the GEMM and the
// attention rates at their best efficiency.
func (c *Calibrated) bound() float64 {
	return max(c.gemmPeak()*c.K.GEMMEfficiency, c.Dev.BF16*c.K.AttnEfficiency*c.stack())
}

// Compute is the module's FLOPs spread evenly at the best rate any shape
// reaches: every part of Time's compute is at least that. A capacity
// below the experts' even share drops part of their FLOPs, which Time
// does not run either.
func (c *Calibrated) Compute(s *Shape, n int) float64 {
	f := s.FLOPsPerSample
	if cs := c.Train.MoECapacityShare(); cs < 1 {
		f -= min(s.Dims.ExpertFLOPsPerSample, f) * (1 - cs)
	}
	return f * float64(c.Job.Samples) / (float64(n) * c.bound())
}

// OffsetClass: the model reads the offset only as its place in a node.
func (c *Calibrated) OffsetClass(offset int) int {
	if c.fast || c.Job.GPUsPerNode == 0 {
		return 0
	}
	return offset % c.Job.GPUsPerNode
}

// Fastest is c with every group inside a node.
func (c *Calibrated) Fastest() Model {
	f := *c
	f.fast = true
	return &f
}

// LowerBound is the fastest time without the bubble and the data-parallel
// reduction, the two parts that read micro-batches and parameters.
func (c *Calibrated) LowerBound(s *Shape, m Module) float64 {
	f := *c
	f.fast = true
	t := f.time(s, &m, true)
	return t.Total
}

// Time is module m's time per global batch.
func (c *Calibrated) Time(s *Shape, m Module) Parts { return c.time(s, &m, false) }

// stack is the attention kernel's speed relative to Transformer Engine's
// fused attention: the local layer spec or an unfused backend computes
// softmax(QK^T)V as separate kernels through memory.
func (c *Calibrated) stack() float64 {
	switch c.Train.AttentionBackend {
	case "unfused", "local":
		return c.K.UnfusedAttention
	case "", "auto":
		// The local spec's own core attention is Megatron-core's unfused
		// DotProductAttention.
		if c.Train.TransformerImpl == "local" {
			return c.K.UnfusedAttention
		}
	}
	return 1
}

func (c *Calibrated) time(s *Shape, m *Module, bound bool) Parts {
	var t Parts
	if s.FLOPsPerSample == 0 {
		return t
	}
	w := c.work(s, m)
	w.bound = bound
	compute, flush := c.compute(s, m, &w)
	t.Compute = compute
	t.TP = c.tpComm(s, m, &w)
	t.CP = c.cpComm(s, m, &w)
	t.EP = c.epComm(s, m, &w)
	t.PP = c.ppComm(s, m, &w)
	if c.local() {
		c.localCompute(s, m, &w, &t)
	}
	if !bound {
		// Narayanan et al. 2021, sec. 2.2: the interleaved 1F1B bubble is
		// (pp-1)/(m*vpp) of a stage's busy time, communication inside the
		// layers included.
		v := max(1, m.VPP)
		t.Bubble = (t.Compute + t.TP + t.CP + t.EP) * float64(m.PP-1) / float64(max(1, m.Microbatches)*v)
		// The deferred output-layer GEMMs the flush does not hide
		// (deferral) lengthen the pipeline's idle end.
		t.Bubble += flush
		t.DP = c.dpComm(s, m, &w, t.Compute)
		if c.local() {
			// The optimizer step reads the parameters, which the lower
			// bound may not.
			t.Compute += c.localOptimizer(s, m)
		}
	}
	t.Total = t.Compute + t.Bubble + t.TP + t.CP + t.EP + t.PP + t.DP
	return t
}

// work is what one GPU of the module runs per global batch.
type work struct {
	samples float64 // samples through one GPU (its data lane's)
	stage   float64 // layers of one pipeline stage
	tokens  float64 // tokens of a sample on one GPU (seq / cp)
	mbTok   float64 // tokens of a micro-batch on one GPU
	fwd     float64 // forward passes per layer and micro-batch: 1, more with recompute
	bound   bool    // for the lower bound (deferral)
}

func (c *Calibrated) work(s *Shape, m *Module) work {
	lanes := float64(max(1, m.DP*m.GTPRemat))
	mbs := float64(max(1, c.Job.MicroBatch))
	if c.Job.Bridge {
		mbs = max(1, mbs/lanes)
	}
	w := work{
		samples: float64(c.Job.Samples) / lanes,
		// The busiest stage's layers (an uneven split's).
		stage:  max(1, m.Imbalance) * float64(s.Layers) / float64(max(1, m.PP)),
		tokens: float64(s.Seq) / float64(max(1, m.CP)),
		fwd:    1,
	}
	w.mbTok = mbs * w.tokens
	if c.Train.RecomputeGranularity == model.RecomputeFull {
		// An even stage's chunk: the busiest stage's extra layers slow it
		// through pace, and a split must never make a stage faster.
		even := float64(s.Layers) / float64(max(1, m.PP))
		w.fwd = 1 + c.recomputed(even/float64(max(1, m.VPP)))
	}
	return w
}

// recomputed is the share of a chunk's layers full recompute runs twice:
// every one with the uniform method (Megatron's default), the first
// recompute_num_layers of each stage's chunk with block (Megatron-LM
// README, "Activation Checkpointing and Recomputation").
func (c *Calibrated) recomputed(chunk float64) float64 {
	if c.Train.RecomputeMethod == "block" && c.Train.RecomputeNumLayers > 0 && chunk > 0 {
		return min(1, float64(c.Train.RecomputeNumLayers)/chunk)
	}
	return 1
}
