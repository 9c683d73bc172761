package plan

import "fmt"

// Hardware holds the figures of the step-time model (docs/suggest.md).
type Hardware struct {
	Name       string
	PeakFLOPs  float64 // dense BF16 FLOP/s per GPU
	Efficiency float64 // fraction of the peak a layer reaches (model FLOPs utilisation)
	NVLink     float64 // bytes/s per GPU inside a node
	Network    float64 // bytes/s per GPU across nodes
}

// GPUs are the built-in defaults (--gpu), from the vendors' data sheets:
// H100 SXM and H200 989 TFLOP/s dense BF16 and NVLink 4 at 450 GB/s per
// direction; B200 2.25 PFLOP/s dense BF16 and NVLink 5 at 900 GB/s. The
// network is one 400 Gb/s NIC per GPU (50 GB/s), as in DGX H100/H200/B200.
// Efficiency 0.4 is the MFU Megatron reaches on GPT models of this size
// (Narayanan et al. 2021, table 1: 40-52% of peak on A100).
var GPUs = map[string]Hardware{
	"H100": {Name: "H100", PeakFLOPs: 989e12, Efficiency: 0.4, NVLink: 450e9, Network: 50e9},
	"H200": {Name: "H200", PeakFLOPs: 989e12, Efficiency: 0.4, NVLink: 450e9, Network: 50e9},
	"B200": {Name: "B200", PeakFLOPs: 2250e12, Efficiency: 0.4, NVLink: 900e9, Network: 50e9},
}

// Check reports a figure that would make the model meaningless.
func (h Hardware) Check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"peak FLOP/s", h.PeakFLOPs}, {"efficiency", h.Efficiency}, {"NVLink bandwidth", h.NVLink}, {"network bandwidth", h.Network}} {
		if !(f.v > 0) || f.v > 1e30 {
			return fmt.Errorf("%s must be a positive number, got %g", f.name, f.v)
		}
	}
	if h.Efficiency > 1 {
		return fmt.Errorf("efficiency must be at most 1, got %g", h.Efficiency)
	}
	return nil
}

// Shape is what the step-time model needs to know of a module's model;
// the zero Shape (no model) costs nothing.
type Shape struct {
	FLOPsPerSample float64 // training FLOPs of one sample (forward and backward)
	Layers         int     // transformer layers
	MoELayers      int     // of which MoE
	Hidden         int     // hidden size
	Seq            int     // tokens per sample
	KVDim          int     // key/value width: query groups * kv channels
	TopK           int     // experts per token
}

// ModuleTime is one module's share of the step, in seconds per global
// batch, with its parts.
type ModuleTime struct {
	Name    string  `json:"name" yaml:"name"`
	Compute float64 `json:"compute_s" yaml:"compute_s"`
	Bubble  float64 `json:"bubble_s" yaml:"bubble_s"`
	TP      float64 `json:"tp_comm_s" yaml:"tp_comm_s"`
	CP      float64 `json:"cp_comm_s" yaml:"cp_comm_s"`
	EP      float64 `json:"ep_comm_s" yaml:"ep_comm_s"`
	PP      float64 `json:"pp_comm_s" yaml:"pp_comm_s"`
	DP      float64 `json:"dp_comm_s" yaml:"dp_comm_s"`
	Total   float64 `json:"total_s" yaml:"total_s"`
	// Idle is the fraction of the step this module waits for a slower one
	// (non-colocated modules run side by side).
	Idle float64 `json:"idle_fraction" yaml:"idle_fraction"`
	// MemoryBytes is the estimate for the module's most loaded GPU and
	// HeadroomBytes what is left of gpu_memory (0 when either is unknown).
	MemoryBytes   float64 `json:"memory_bytes" yaml:"memory_bytes"`
	HeadroomBytes float64 `json:"headroom_bytes" yaml:"headroom_bytes"`
}

// Score is a candidate's estimated time per global batch and its parts.
type Score struct {
	StepSeconds float64 `json:"step_s" yaml:"step_s"`
	// SumSeconds is the sum of the modules' times, the second key of the
	// ranking: among equal step times, the layout whose other modules
	// finish sooner (more slack) comes first.
	SumSeconds float64      `json:"sum_s" yaml:"sum_s"`
	Samples    int          `json:"samples_per_step" yaml:"samples_per_step"`
	Warnings   int          `json:"warnings" yaml:"warnings"`
	Modules    []ModuleTime `json:"modules" yaml:"modules"`
}

// job is what every module's time shares: the step's samples and batch
// semantics.
type job struct {
	hw        Hardware
	gpn       int // GPUs per node; 0: one node
	samples   int // samples per global batch
	mbs       int
	bridge    bool // micro_batch_size is global (megatron-bridge)
	colocated bool
}

// inNode reports whether every group whose members are stride apart, size
// of them, stays inside one node for a module at offset: the module fits
// in one node, or the groups tile whole nodes from an aligned start.
func (j *job) inNode(offset, n, stride, size int) bool {
	if size < 2 {
		return true
	}
	if j.gpn == 0 || offset/j.gpn == (offset+n-1)/j.gpn {
		return true
	}
	block := stride * size
	return block <= j.gpn && j.gpn%block == 0 && offset%block == 0
}

// offClass is what the model reads of a module's offset: inNode reads
// only its place inside a node.
func (j *job) offClass(offset int) int {
	if j.gpn == 0 {
		return 0
	}
	return offset % j.gpn
}

func (j *job) bw(local bool) float64 {
	if local {
		return j.hw.NVLink
	}
	return j.hw.Network
}

// microbatches is the number m of micro-batches each pipeline sees per
// global batch; lanes is the language module's dp*gtp_remat.
func (j *job) microbatches(lanes int) int {
	step := j.mbs
	if !j.bridge {
		step *= lanes
	}
	return max(1, j.samples/max(1, step))
}

// compute is the lower bound of a module's time: its FLOPs spread evenly
// over its GPUs at the model's efficiency.
func (j *job) compute(s *Shape, n int) float64 {
	return s.FLOPsPerSample * float64(j.samples) / (float64(n) * j.hw.PeakFLOPs * j.hw.Efficiency)
}

// time is the step-time model of docs/suggest.md for one module; m is the
// number of micro-batches and params the parameters on the module's most
// loaded GPU (its gradients are all-reduced over dp).
func (j *job) time(c *Choice, s *Shape, m int, params float64) ModuleTime {
	t := ModuleTime{Name: c.Name}
	if s.FLOPsPerSample == 0 {
		return t
	}
	const bf16, fp32 = 2, 4
	n, z := c.NumRanks, c.Sizes
	lanes := float64(c.DP * z.GTPRemat)
	t.Compute = j.compute(s, n)
	v := max(1, z.VPP)
	// Narayanan et al. 2021, eq. for the interleaved 1F1B bubble: the
	// bubble is (pp-1)/(m*vpp) of the ideal time, (pp-1)/(m*vpp+pp-1) of
	// the step.
	t.Bubble = t.Compute * float64(z.PP-1) / float64(m*v)
	// Work per GPU: samples per data lane times the layers of one stage.
	perLane := float64(j.samples) / lanes
	layers := perLane * float64(s.Layers) / float64(z.PP)
	tokens := float64(s.Seq) / float64(z.CP)
	// Korthikanti et al. 2022, sec. 4.2.2: per layer, two all-reduces
	// forward and two backward over tp (with sequence parallelism the same
	// volume as all-gathers and reduce-scatters); a ring all-reduce moves
	// 2(t-1)/t of the buffer per GPU.
	if z.TP > 1 {
		vol := layers * 4 * 2 * frac(z.TP) * tokens * float64(s.Hidden) * bf16
		t.TP = vol / j.bw(j.inNode(c.RankOffset, n, 1, z.TP))
	}
	// Context parallelism: an all-gather of K and V forward and a
	// reduce-scatter of their gradients backward, per layer.
	if z.CP > 1 {
		vol := layers * 2 * frac(z.CP) * float64(s.Seq) * 2 * float64(s.KVDim) * bf16
		t.CP = vol / j.bw(j.inNode(c.RankOffset, n, z.TP*z.GTPRemat, z.CP))
	}
	// Expert parallelism: dispatch and combine all-to-alls, forward and
	// backward, of every routed token copy, per MoE layer.
	if z.EP > 1 && s.MoELayers > 0 {
		moe := perLane * float64(s.MoELayers) / float64(z.PP)
		vol := moe * 4 * frac(z.EP) * tokens * float64(s.TopK) * float64(s.Hidden) * bf16
		t.EP = vol / j.bw(j.inNode(c.RankOffset, n, z.ExptTP, z.EP))
	}
	// Pipeline: each micro-batch's activations cross every stage boundary
	// of every virtual stage, forward and backward.
	if z.PP > 1 {
		vol := perLane * 2 * float64(v) * tokens * float64(s.Hidden) / float64(z.TP) * bf16
		t.PP = vol / j.bw(j.inNode(c.RankOffset, n, n/z.PP, z.PP))
	}
	// Data parallelism: a ring all-reduce of the FP32 gradients (Megatron's
	// default main_grads_dtype), not overlapped with compute.
	if c.DP > 1 {
		vol := 2 * frac(c.DP) * params * fp32
		t.DP = vol / j.bw(j.inNode(c.RankOffset, n, z.TP*z.GTPRemat*z.CP, c.DP))
	}
	t.Total = t.Compute + t.Bubble + t.TP + t.CP + t.EP + t.PP + t.DP
	return t
}

// frac is (k-1)/k, the share of a buffer a ring collective moves per GPU.
func frac(k int) float64 { return float64(k-1) / float64(k) }

// fastest is j with every group inside a node at the faster of the two
// bandwidths: its times are at most j's, at any offset.
func (j *job) fastest() job {
	k := *j
	k.gpn = 0
	k.hw.NVLink = max(j.hw.NVLink, j.hw.Network)
	return k
}

// lowerBound is a lower bound of a module's time whatever its offset and
// micro-batch count: every group inside a node at the faster of the two
// bandwidths, and no pipeline bubble.
func (j *job) lowerBound(c *Choice, s *Shape, params float64) float64 {
	k := j.fastest()
	t := k.time(c, s, 1, params)
	return t.Total - t.Bubble
}

// Overrides replace figures of a Hardware, in the units users give them:
// peak TFLOP/s, efficiency (a fraction), NVLink GB/s and network GB/s, in
// that order; nil keeps the default.
type Overrides [4]*float64

// With is h with the overrides set, checked.
func (h Hardware) With(o Overrides) (Hardware, error) {
	for i, f := range []struct {
		dst   *float64
		scale float64
	}{{&h.PeakFLOPs, 1e12}, {&h.Efficiency, 1}, {&h.NVLink, 1e9}, {&h.Network, 1e9}} {
		if o[i] != nil {
			*f.dst = *o[i] * f.scale
		}
	}
	return h, h.Check()
}
