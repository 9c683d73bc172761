package steptime

import "math"

const bf16Bytes = 2

// gemmEff is the fraction of the GEMM peak a GEMM reaches whose weight
// shard is d wide and which multiplies m tokens: Emax d/(d+D0) m/(m+M0).
// Narrow shards (large tp, small experts) and few tokens (short sequences,
// large cp, small experts' token counts) leave the tensor cores idle, the
// weak-scaling observation of Megatron-LM's README.md:116 at d98e8a6
// ("larger GEMMs have higher arithmetic intensity"); D0 and M0 are fitted.
func (c *Calibrated) gemmEff(d, m float64) float64 {
	if c.local() {
		return c.L.GEMMEfficiency
	}
	return c.K.GEMMEfficiency * d / (d + c.K.WidthHalf) * m / (m + c.K.TokensHalf)
}

// compute is one GPU's busy time per global batch: the dense GEMMs, the
// experts' GEMMs, core attention in its kernel, and the memory-bound
// element-wise work (norms, activations, residuals, dropout, the
// optimizer's share excluded), with recompute's extra forward; and apart,
// flush, the deferred output-layer GEMMs' time the pipeline flush exposes
// (pace), which the bubble carries.
func (c *Calibrated) compute(s *Shape, m *Module, w *work) (busy, flush float64) {
	n := float64(max(1, m.Ranks))
	perGPU := float64(c.Job.Samples) / n // samples' FLOPs a GPU carries
	d := &s.Dims
	attn := min(d.AttnFLOPsPerSample, s.FLOPsPerSample)
	expert := min(d.ExpertFLOPsPerSample, s.FLOPsPerSample-attn)
	dense := s.FLOPsPerSample - attn - expert
	// Megatron's FLOPs are three passes (forward, two backward); full
	// recompute runs the forward again, selective recompute core
	// attention's forward (Korthikanti et al. 2022, sec. 5), unless
	// recompute_modules leaves core_attn out.
	again := (2 + w.fwd) / 3
	attnAgain := again
	if c.Train.Recomputes("core_attn") {
		attnAgain = 4.0 / 3
	}
	h := float64(max(1, s.Hidden))
	tp := float64(max(1, m.TP))
	// Selective recompute's submodules (recompute_modules) run their
	// forward again: a third of their FLOPs.
	rc := 0.0
	if c.Train.Recomputes("mlp") {
		rc += d.DenseMLPFLOPsPerSample
	}
	if c.Train.Recomputes("shared_experts") || c.Train.Recomputes("moe") {
		rc += d.SharedExpertFLOPsPerSample
	}
	if c.Train.Recomputes("mla_up_proj") {
		rc += d.MLAUpFLOPsPerSample
	}
	t := (dense*again + rc/3) * perGPU * c.tpPenalty(s, m.TP, w.mbTok, denseLayers) / (c.gemmPeak() * c.gemmEff(h/tp, w.mbTok))
	if expert > 0 {
		// Tokens an expert multiplies per micro-batch: a GPU's tokens (s/tp
		// with sequence parallelism), topk copies each, gathered from the ep
		// group and the expert-tp group, over the experts.
		// Capacity: padded experts compute their capacity, the factor
		// times their share (model.Training.MoECapacityShare).
		ex := float64(max(1, d.Experts))
		cs := c.Train.MoECapacityShare()
		mt := w.mbTok / tp * float64(max(1, s.TopK)) * float64(max(1, m.EP)*max(1, m.ExptTP)) / ex * cs
		width := float64(max(1, d.MoEFFN)) / float64(max(1, m.ExptTP))
		ea := again
		if c.Train.Recomputes("moe") {
			ea += 1.0 / 3
		}
		t += expert * cs * perGPU * ea * c.tpPenalty(s, m.ExptTP, mt, expertLayers) / (c.gemmPeak() * c.gemmEff(width, mt))
	}
	if attn > 0 {
		eff := c.K.AttnEfficiency * c.stack() * w.mbTok / (w.mbTok + c.K.TokensHalf)
		if c.local() && m.CP > 1 {
			eff *= c.L.CPAttention
		}
		t += attn * perGPU * attnAgain / (c.Dev.BF16 * eff)
	}
	// Element-wise traffic: ElementwiseBytes of bf16 activations per
	// token, hidden unit and layer, over tp with sequence parallelism.
	sp := 1.0
	if s.Dims.SequenceParallel {
		sp = tp
	}
	even := float64(s.Layers) / float64(max(1, m.PP)) // pace adds the busiest stage's share
	eb := c.K.ElementwiseBytes
	if c.local() {
		// The local spec runs norms, bias, activation and dropout unfused:
		// measured (local.go).
		eb = c.L.ElementwiseBytes
	}
	bytes := eb * w.samples * w.tokens * even * h / sp * again
	base := t + bytes/c.Dev.HBM
	steady, flush := c.pace(s, m, w.bound)
	return base * steady, base * flush
}

// attnTime is the part of compute core attention takes (what ring
// attention's exchange hides behind).
func (c *Calibrated) attnTime(s *Shape, m *Module, w *work) float64 {
	attn := min(s.Dims.AttnFLOPsPerSample, s.FLOPsPerSample)
	if attn == 0 {
		return 0
	}
	eff := c.K.AttnEfficiency * c.stack() * w.mbTok / (w.mbTok + c.K.TokensHalf)
	return attn * float64(c.Job.Samples) / float64(max(1, m.Ranks)) / (c.Dev.BF16 * eff)
}

// inNode reports whether every group whose members are stride apart, size
// of them, stays inside one node for a module at offset.
func (c *Calibrated) inNode(offset, n, stride, size int) bool {
	gpn := c.Job.GPUsPerNode
	if c.fast || size < 2 || gpn == 0 || offset/gpn == (offset+n-1)/gpn {
		return true
	}
	block := stride * size
	return block <= gpn && gpn%block == 0 && offset%block == 0
}

// ring is the time of a ring collective moving vol bytes per GPU: at the
// NVLink rate inside a node; across nodes NCCL runs one ring per NIC, so
// a group with k members in each node crosses between nodes at k NICs'
// rate (a group of one GPU a node at its one NIC's), at most NVLink's;
// each at CollectiveEfficiency of the data sheet.
func (c *Calibrated) ring(vol float64, m *Module, stride, size int) float64 {
	if vol == 0 {
		return 0
	}
	bw := c.Dev.NVLink
	if c.fast {
		bw = max(c.Dev.NVLink, c.Dev.Network)
	} else if !c.inNode(m.Offset, m.Ranks, stride, size) {
		k := min(size, max(1, c.Job.GPUsPerNode/max(1, stride)))
		bw = min(c.Dev.NVLink, float64(k)*c.Dev.Network)
	}
	return vol / (bw * c.K.CollectiveEfficiency)
}

// dispatch is the all-to-all of the token dispatcher: per unit of vol,
// k copies of a token go to the ep ranks that hold its experts. Copies for
// ranks in the same node cross NVLink; the rest cross the NIC, each copy
// apart with alltoall, once per destination node with flex (DeepEP and
// HybridEP send a token to a node once and fan it out over NVLink:
// DeepEP's README, "normal kernels"), k random experts over N nodes
// reaching (N-1)(1-(1-1/N)^k) other nodes. flex sends a token to each
// rank of its node once too, whatever number of its experts that rank
// holds (DeepEP's dispatch layout, is_token_in_rank: Megatron-LM
// megatron/core/transformer/moe/fused_a2a.py:91-126 at d98e8a6): k random
// experts over ep ranks reach 1-(1-1/ep)^k of each.
func (c *Calibrated) dispatch(vol, k float64, m *Module, flex bool) float64 {
	if vol == 0 || m.EP < 2 {
		return 0
	}
	ep := float64(m.EP)
	// One expression for every case, so that the fastest model's figure is
	// the same float where the groups are inside a node anyway.
	nv, in, out := c.Dev.NVLink, k*(ep-1)/ep, 0.0
	if flex {
		in = (ep - 1) * (1 - math.Pow(1-1/ep, k))
	}
	switch {
	case c.fast:
		nv = max(c.Dev.NVLink, c.Dev.Network)
	case !c.inNode(m.Offset, m.Ranks, m.ExptTP, m.EP):
		local := float64(min(m.EP, max(1, c.Job.GPUsPerNode/max(1, m.ExptTP))))
		in, out = k*(local-1)/ep, k*(ep-local)/ep
		if flex {
			in = (local - 1) * (1 - math.Pow(1-1/ep, k))
			n := math.Ceil(ep / local)
			out = min(out, (n-1)*(1-math.Pow(1-1/n, k)))
		}
	}
	return vol * (in/nv + out/c.Dev.Network) / c.K.CollectiveEfficiency
}

// tpComm: per layer and micro-batch, the all-reduces (or, with sequence
// parallelism, all-gathers and reduce-scatters of the same volume) of the
// attention and MLP blocks, two in each forward and two in the backward
// (Korthikanti et al. 2022, sec. 4.2.2); a ring moves 2(t-1)/t of the
// buffer. tp_comm_overlap hides all but TPExposed of it behind the GEMMs
// (Megatron-LM transformer_config.py tp_comm_overlap, user buffers), for a
// tp group inside a node only: Transformer Engine's user buffers reach
// peers through CUDA multicast or IPC handles, which an NVLink domain
// alone gives (TransformerEngine issue #1071, 2024-08-02: "only possible
// with single-node tensor-parallelism"; PR #1470 extends it to multi-node
// NVLink, which DGX A100/H100/B200 nodes are not), so a tp group across
// nodes sends all of it exposed.
func (c *Calibrated) tpComm(s *Shape, m *Module, w *work) float64 {
	if m.TP < 2 {
		return 0
	}
	vol := w.samples * w.stage * (2*w.fwd + 2) * 2 * frac(m.TP) * w.tokens * float64(s.Hidden) * bf16Bytes
	t := c.ring(vol, m, 1, m.TP)
	if c.Train.TPCommOverlap && c.inNode(m.Offset, m.Ranks, 1, m.TP) {
		t *= c.K.TPExposed
	}
	return t
}

// cpComm: ring attention passes K and V around the cp group forward and
// their gradients backward (Megatron-LM context parallelism,
// transformer_engine's attention with cp_comm_type p2p), overlapped with
// the attention of the chunk in hand, so only what attention cannot hide
// is exposed: short sequences over a large cp expose it.
func (c *Calibrated) cpComm(s *Shape, m *Module, w *work) float64 {
	if m.CP < 2 {
		return 0
	}
	vol := w.samples * w.stage * (w.fwd + 1) * frac(m.CP) * float64(s.Seq) * 2 * float64(s.KVDim) * bf16Bytes
	t := c.ring(vol, m, m.TP*max(1, m.GTPRemat), m.CP)
	if c.local() {
		// The local stack's context parallelism (the measuring script's
		// shim) all-gathers keys and values before attention and
		// reduce-scatters their gradients after it: nothing overlaps.
		return t
	}
	return max(0, t-c.attnTime(s, m, w))
}

// epComm: the token dispatcher's traffic per MoE layer, forward (dispatch,
// combine; again with full recompute) and backward. alltoall and flex
// (Megatron-LM token_dispatcher.py MoEAlltoAllTokenDispatcher): each GPU
// sends its s/tp tokens (sequence parallel), topk copies each, (ep-1)/ep
// of them to other ep ranks, then all-gathers them over expert tp and
// reduce-scatters the result. allgather (Megatron's default,
// MoEAllGatherTokenDispatcher): every token of the expert-tp x ep group
// gathered on every GPU of it, and their outputs reduce-scattered. overlap_moe_expert_parallel_comm hides all but EPExposed
// behind another micro-batch's compute.
func (c *Calibrated) epComm(s *Shape, m *Module, w *work) float64 {
	if s.MoELayers == 0 {
		return 0
	}
	// Every MoE layer copies its token counts to the host and waits for
	// them, whatever ep: the alltoall dispatcher before its all-to-all, or
	// with ep and tp 1 before it returns (token_dispatcher.py:594-605 and
	// the wait at :956-957 at d98e8a6), and the grouped experts in any
	// case (tokens_per_expert.tolist(), experts.py:896-897 and :915-916):
	// a stall of MoESync seconds per MoE layer, micro-batch and forward
	// pass (full recompute runs the forward again). Not with the alltoall
	// dispatcher padding to capacity, which knows every count beforehand
	// (model.Training.MoEStaticShapes).
	// (The local stack's measured MoE layer holds its synchronisation:
	// LocalConstants.MoELayer.)
	// Recomputing the MoE layers (recompute_modules' moe) runs their
	// forward, its dispatch and combine included, again.
	fwd := w.fwd
	if c.Train.Recomputes("moe") {
		fwd++
	}
	var t float64
	if !c.local() && !c.Train.MoEStaticShapes() {
		mb := w.samples / max(1, w.mbTok/w.tokens)
		t = c.K.MoESync * mb * float64(s.MoELayers) / float64(max(1, m.PP)) * fwd
	}
	if m.EP*m.ExptTP < 2 {
		return t
	}
	layers := w.samples * float64(s.MoELayers) / float64(max(1, m.PP))
	tok := w.tokens / float64(max(1, m.TP)) * float64(s.Hidden) * bf16Bytes
	passes := 2*fwd + 2
	switch d := c.Train.MoETokenDispatcherType; d {
	case "alltoall", "flex":
		// Padded to capacity, the dispatcher sends each expert its
		// capacity (model.Training.MoECapacityShare).
		k := float64(max(1, s.TopK)) * c.Train.MoECapacityShare()
		t += c.dispatch(layers*passes*tok, k, m, d == "flex")
		if m.ExptTP > 1 {
			t += c.ring(layers*passes*float64(m.ExptTP-1)*tok*k, m, 1, m.ExptTP)
		}
	default:
		g := max(1, m.ExptTP) * m.EP
		t += c.ring(layers*passes*float64(g-1)*tok, m, 1, g)
	}
	if c.Train.OverlapMoEExpertParallelComm {
		t *= c.K.EPExposed
	}
	return t
}

// ppComm: each micro-batch's activations and their gradients cross every
// (virtual) stage boundary (Narayanan et al. 2021, sec. 2.2). With the
// interleaved schedule and overlap_p2p_comm (on by default, and only with
// interleaving: Megatron-LM arguments.py:1010-1012 and :3118 at d98e8a6)
// Megatron overlaps these sends with compute, all but PPExposed of them;
// with overlap_p2p_comm false they are batched and waited for
// (batch_p2p_comm, argument_utils.py:307; p2p_communication.py:54), all
// exposed. Each (virtual) stage's forward and backward of a micro-batch also
// pays PPSync seconds of fixed cost: the send/receive handshake and the
// schedule's wait for it, which more micro-batches and more virtual stages
// multiply.
func (c *Calibrated) ppComm(s *Shape, m *Module, w *work) float64 {
	if m.PP < 2 {
		return 0
	}
	v := float64(max(1, m.VPP))
	vol := w.samples * 2 * v * w.tokens * float64(s.Hidden) / float64(max(1, m.TP)) * bf16Bytes
	t := c.ring(vol, m, max(1, m.Ranks/m.PP), m.PP)
	if m.VPP > 1 && !c.Train.NoOverlapP2PComm {
		t *= c.K.PPExposed
	}
	mb := w.samples / max(1, w.mbTok/w.tokens)
	return t + c.K.PPSync*2*v*mb
}

// dpComm: the gradients' reduction over the data-parallel group (dense
// parameters over dp x cp, experts over the expert-data group), in fp32
// unless grad_reduce_in_fp32 is false, and with the distributed optimizer
// the bf16 parameters' all-gather. overlap_grad_reduce overlaps the
// reduce-scatter with the last micro-batch's backward and
// overlap_param_gather the all-gather with the next step's first forward
// (Megatron-LM distributed/param_and_grad_buffer.py: buckets are reduced
// as the last micro-batch's backward fills them), so only what those
// passes cannot hide is exposed.
func (c *Calibrated) dpComm(s *Shape, m *Module, w *work, compute float64) float64 {
	d := &s.Dims
	dense, expert := d.DenseParams/float64(max(1, m.TP)*max(1, m.PP)), 0.0
	if d.ExpertParams > 0 {
		expert = d.ExpertParams / float64(max(1, m.EP)*max(1, m.ExptTP)*max(1, m.PP))
	}
	if d.DenseParams == 0 && d.ExpertParams == 0 {
		dense = m.Params
	}
	gb := 4.0
	if c.Train.GradReduceInBF16 {
		gb = 2
	}
	dg := max(1, m.DP*max(1, m.CP))
	eg := max(1, m.Ranks/(max(1, m.PP)*max(1, m.EP)*max(1, m.ExptTP)))
	if s.MoELayers == 0 {
		eg = dg
	}
	if dg < 2 && eg < 2 {
		return 0
	}
	stride := max(1, m.TP*max(1, m.GTPRemat))
	var rs, ag float64
	if c.Train.UseDistributedOptimizer {
		rs = c.ring(frac(dg)*dense*gb, m, stride, dg) + c.ring(frac(eg)*expert*gb, m, max(1, m.EP*m.ExptTP), eg)
		ag = c.ring(frac(dg)*dense*bf16Bytes, m, stride, dg) + c.ring(frac(eg)*expert*bf16Bytes, m, max(1, m.EP*m.ExptTP), eg)
	} else {
		rs = c.ring(2*frac(dg)*dense*gb, m, stride, dg) + c.ring(2*frac(eg)*expert*gb, m, max(1, m.EP*m.ExptTP), eg)
	}
	// The last micro-batch's backward (two thirds of its compute) and the
	// first one's forward; micro-batches per step of this module's own
	// data lanes, so that the window does not read the search's count.
	mb := float64(c.Job.Microbatches(max(1, m.DP*max(1, m.GTPRemat))))
	if c.Train.OverlapGradReduce {
		rs = max(0, rs-compute*2/3/mb)
	}
	if c.Train.OverlapParamGather {
		ag = max(0, ag-compute/3/mb)
	}
	return rs + ag
}
