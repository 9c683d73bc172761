package steptime

import "github.com/mimoplan/mimoplan/internal/model"

// LocalConstants are what the local stack costs beyond the calibrated
// model's terms: Megatron-core's local layer spec (transformer_impl:
// local) on a machine without Transformer Engine or Apex, where every op
// is a PyTorch op issued from Python, and Megatron's optimizer falls back to
// torch AdamW and to its own per-tensor loops for the gradient norm and the
// copies (megatron/core/optimizer/__init__.py:29-35,
// optimizer/clip_grads.py:38-47 and utils.py:1366-1389 at d98e8a6). Every
// figure was measured on its own, on shapes other than the whole-step runs
// it is checked against (scripts/measure-components.py on 2 H200,
// testdata/measured/components-h200.json; scripts/fit-local.py derives
// each from it and from gemm-h200.json and gemm-h100.json).
type LocalConstants struct {
	// GEMMEfficiency is the share of the BF16 peak torch.matmul reaches and
	// GEMMLatency the fixed time of one product: t = F/(E peak) + t0 over
	// the 528 measured products of transformer shapes (median error 5.8%).
	GEMMEfficiency, GEMMLatency float64
	// ElementwiseBytes is the HBM traffic of everything in a layer that is
	// neither a GEMM nor attention (torch norms, bias, GeLU, dropout,
	// residuals, the layouts' copies), per token, hidden unit and layer:
	// GPU-bound layers' time less their GEMMs and attention.
	ElementwiseBytes float64
	// OptimizerBytes is the optimizer step's memory traffic per parameter
	// it holds (torch AdamW's foreach passes over fp32 master weights,
	// gradients and both moments, clipping, the copy back to bf16 and the
	// gradient buffer's zeroing) at the data-sheet bandwidth;
	// OptimizerTensor the fixed cost per parameter tensor (the fallback's
	// per-tensor norm, which reads each tensor's norm back to the host, and
	// per-tensor copies).
	OptimizerBytes, OptimizerTensor float64
	// HostBlock is the host's time to issue one bare layer's forward and
	// backward of a micro-batch (tp 1, fused attention) and HostTensor what
	// Megatron's schedule and DDP add per parameter tensor of the layer
	// (DDP's gradient hook on each): 12 tensors of a GPT layer make the
	// 2.88 ms a layer measured through the schedule. HostMicrobatch is what
	// a micro-batch costs the host outside the layers (embedding, output
	// layer, loss, schedule). HostTP, HostSP,
	// HostCP and HostUnfusedAttention are what a layer adds with tensor
	// parallelism, sequence parallelism, context parallelism (the
	// all-gather attention) and Megatron's unfused DotProductAttention;
	// HostRecompute what full recompute's second forward adds to a layer.
	HostBlock, HostTensor, HostMicrobatch        float64
	HostTP, HostSP, HostCP, HostUnfusedAttention float64
	HostRecompute                                float64
	// CPAttention is the speed of attention under context parallelism
	// through the measuring script's shim (measure_shims.SDPAttention:
	// keys and values all-gathered, each local query chunk against its
	// prefix with a lower-right causal mask) relative to fused attention on
	// the same tokens.
	CPAttention float64
	// MoELayer and MoEExpert: the host's time to issue a MoE layer's
	// forward and backward of a micro-batch through the schedule and DDP
	// is MoELayer plus MoEExpert per local expert (the local spec's
	// SequentialMLP runs the experts one after another, DDP hooks each
	// one's tensors); MoESync is the stall the dispatcher's copy of token
	// counts to the host adds to every MoE layer and micro-batch, whether
	// the GPU or the host sets the pace (a MoE layer's wall time less its
	// kernels' GPU time where the GPU's work exceeds the host's). The line
	// is fitted to MoE layers through the schedule of three machines (runs
	// c4, c5, c6), whose host times differ by up to a half on one layer.
	MoELayer, MoEExpert, MoESync float64
	// MoEPermuteBytes is the HBM traffic of a MoE layer's routing kernels
	// (the router's top-k, the dispatcher's index sort, the tokens'
	// permutation and unpermutation, SequentialMLP's split and cat: torch
	// index_select, index_add, scatter, gather, cat), forward and backward,
	// per routed token copy (top-k a token) and hidden unit: their GPU time
	// in the kernel tables of MoE layers at 4,096 and 16,384 tokens, which
	// the dense layers' ElementwiseBytes does not hold.
	MoEPermuteBytes float64
}

// LocalMeasured are the figures scripts/fit-local.py prints for
// testdata/measured/components-h200.json (runs c1-c6).
var LocalMeasured = LocalConstants{
	GEMMEfficiency:       0.707,
	GEMMLatency:          18.2e-6,
	ElementwiseBytes:     325,
	OptimizerBytes:       132.4,
	OptimizerTensor:      48.3e-6,
	HostBlock:            1.90e-3,
	HostTensor:           82e-6,
	HostMicrobatch:       2.12e-3,
	HostTP:               0.65e-3,
	HostSP:               0.99e-3,
	HostCP:               1.77e-3,
	HostUnfusedAttention: 1.65e-3,
	HostRecompute:        1.35e-3,
	CPAttention:          0.39,
	MoELayer:             8.53e-3,
	MoEExpert:            0.362e-3,
	MoESync:              1.20e-3,
	MoEPermuteBytes:      92,
}

// local reports whether the layout states the local stack.
func (c *Calibrated) local() bool { return c.Train.TransformerImpl == "local" }

// gemmsPerLayer is the GEMMs of a layer's forward (QKV, projection, fc1,
// fc2), each run again for the input and the weight gradients.
const gemmsPerLayer = 4 * 3

// moeGEMMs is the GEMMs of a MoE layer on the local stack, forward and
// both gradients: QKV, projection, the router, and fc1 and fc2 of every
// expert on the GPU one after another (the local spec's SequentialMLP,
// moe_grouped_gemm off: megatron/core/transformer/moe/experts.py at
// d98e8a6), and a shared expert's two. Counted in the kernel tables of
// components-h200.json's run c6: 57 GEMM kernels a MoE layer and
// micro-batch with 8 experts on the GPU, 33 with 4.
func moeGEMMs(d *Dims, local float64) float64 {
	n := 3 + 2*local
	if d.SharedExpert {
		n += 2
	}
	return 3 * n
}

// localGPU is the GPU work the local stack adds to compute's: every GEMM's
// fixed latency, and MoE layers' routing kernels.
func (c *Calibrated) localGPU(s *Shape, m *Module, w *work) float64 {
	mb := w.samples / max(1, w.mbTok/w.tokens)
	again := (2 + w.fwd) / 3
	moe := float64(s.MoELayers) / float64(max(1, m.PP)) * max(1, m.Imbalance)
	d := &s.Dims
	gemms := max(0, w.stage-moe) * gemmsPerLayer
	var t float64
	if moe > 0 {
		gemms += moe * moeGEMMs(d, float64(max(1, d.Experts))/float64(max(1, m.EP)))
		// Each routed copy of the GPU's tokens (top-k a token; with ep the
		// dispatcher's ep-fold gathered tokens for ep-fold fewer experts).
		copies := w.mbTok / float64(max(1, m.TP)) * float64(max(1, s.TopK))
		t = c.L.MoEPermuteBytes * copies * float64(s.Hidden) / c.Dev.HBM * moe * mb * again
	}
	return t + c.L.GEMMLatency*gemms*mb*again
}

// localCompute is what the local stack adds to the GPU's busy time: the
// GEMMs' fixed latency, then the host's issue time where it exceeds the
// GPU's compute (the GPU waits for the host; MoE layers' issue time
// included), and the MoE layers' synchronisation stall on top.
func (c *Calibrated) localCompute(s *Shape, m *Module, w *work, t *Parts) {
	mb := w.samples / max(1, w.mbTok/w.tokens) // micro-batches through this GPU
	t.Compute += c.localGPU(s, m, w)
	moe := float64(s.MoELayers) / float64(max(1, m.PP)) * max(1, m.Imbalance)
	dense := max(0, w.stage-moe)
	d := &s.Dims
	local := float64(max(1, d.Experts)) / float64(max(1, m.EP))
	extra := 0.0 // what the settings add to a layer's issue time
	if m.TP > 1 {
		extra += c.L.HostTP
		if s.Dims.SequenceParallel {
			extra += c.L.HostSP
		}
	}
	if m.CP > 1 {
		extra += c.L.HostCP
	}
	if c.stack() < 1 {
		extra += c.L.HostUnfusedAttention
	}
	if c.Train.RecomputeGranularity == model.RecomputeFull {
		extra += c.L.HostRecompute * (w.fwd - 1)
	}
	host := dense * (c.L.HostBlock + c.L.HostTensor*d.LayerTensors + extra)
	if moe > 0 {
		// Measured with tp 1 fused attention: a MoE layer pays the
		// attention's settings as a dense one does.
		host += moe * (c.L.MoELayer + c.L.MoEExpert*local + extra)
	}
	// The floor is on compute alone, the communication's kernels counted
	// on top: a floor on their sum would make the fastest model's total
	// differ from this one's by rounding, in either direction.
	t.Compute = max(t.Compute, mb*(host+c.L.HostMicrobatch))
	if !c.Train.MoEStaticShapes() {
		// Padded to capacity, the dispatcher reads no counts back and the
		// host does not wait (model.Training.MoEStaticShapes).
		t.Compute += mb * moe * c.L.MoESync
	}
}

// localOptimizer is the optimizer step over the parameters this GPU's
// optimizer holds (the distributed optimizer's share of the data-parallel
// group, dense and experts alike: an approximation for the experts, which
// it shards over the expert-data group) and their tensors.
func (c *Calibrated) localOptimizer(s *Shape, m *Module) float64 {
	p, tensors := m.Params, c.tensorsOnRank(s, m)
	if c.Train.UseDistributedOptimizer {
		dp := float64(max(1, m.DP*max(1, m.CP)))
		p /= dp
		tensors /= dp
	}
	return p*c.L.OptimizerBytes/c.Dev.HBM + tensors*c.L.OptimizerTensor
}

// tensorsOnRank is the parameter tensors on a GPU of the busiest stage:
// its layers' and its local experts', and the embedding and output ones.
func (c *Calibrated) tensorsOnRank(s *Shape, m *Module) float64 {
	d := &s.Dims
	pp := float64(max(1, m.PP))
	layers := float64(s.Layers) / pp * max(1, m.Imbalance)
	moe := float64(s.MoELayers) / pp * max(1, m.Imbalance)
	experts := float64(d.Experts) / float64(max(1, m.EP))
	return layers*d.LayerTensors + moe*experts*d.ExpertTensors + d.OuterTensors
}
