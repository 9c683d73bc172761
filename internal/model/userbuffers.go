package model

import "fmt"

// TermUserBuffers is Transformer Engine's communication buffers for
// tp_comm_overlap.
const TermUserBuffers = "tp_comm_overlap_buffers"

// userBufferGEMMs counts the GEMMs of a transformer layer that
// Transformer Engine's initialize_ub gives a buffer, with its default
// methods (Megatron passes no ub_cfgs without --tp-comm-overlap-cfg):
// ring exchange (qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad), pipeline
// (proj_fprop, fc2_fprop), bulk (qkv_dgrad, qkv_wgrad, fc1_dgrad,
// fc1_wgrad) and external (proj_wgrad, fc2_wgrad). Of them, the eight
// all-gather ones keep an fp8 buffer (uint8) when Megatron runs fp8; the
// four reduce-scatter ones stay bf16. TransformerEngine@d0067d0da6cb
// transformer_engine/pytorch/module/base.py:336-360 (the lists and
// methods), :391 (fp8_buf), :472-476 (uint8 or bf16), :561-569 (one
// communicator a GEMM).
const (
	userBufferGEMMs    = 12
	userBufferFP8GEMMs = 8
)

// UserBufferBytes is the GPU memory Transformer Engine's userbuffers
// hold on one GPU with tp_comm_overlap at tp > 1: a buffer a GEMM of the
// shape Megatron gives, (seq_length x micro_batch_size / cp) x hidden,
// each allocated and registered outside PyTorch's caching allocator at
// the buffer's full size (a ring exchange's all-gather: tp chunks of
// 1/tp). Megatron-LM@d98e8a6 megatron/training/initialize.py:218-227
// (the shape), :230-232 (one quantization mode: fp8 or none);
// TransformerEngine@d0067d0da6cb
// transformer_engine/common/comm_gemm_overlap/comm_gemm_overlap.cpp:419-421,
// :813-824 (the bytes registered).
func UserBufferBytes(cfg Config, par Parallel, tr Training) float64 {
	c := cfg.Resolve()
	p := par.Resolve()
	if !tr.TPCommOverlap || p.TP < 2 {
		return 0
	}
	rows := float64(c.SeqLength) * float64(max(1, tr.MicroBatchSize)) / float64(max(1, p.CP))
	perGEMM := rows * float64(c.HiddenSize)
	bytes := 2 * perGEMM * userBufferGEMMs
	if tr.FP8 != "" {
		bytes -= perGEMM * userBufferFP8GEMMs // 1 byte in place of 2
	}
	return bytes
}

// addUserBuffers adds UserBufferBytes as an overhead: the buffers are
// outside PyTorch's allocator, so no slack is reserved above them.
func addUserBuffers(e *Estimate, cfg Config, par Parallel, tr Training) {
	b := UserBufferBytes(cfg, par, tr)
	if b == 0 {
		return
	}
	dtype := "bf16"
	if tr.FP8 != "" {
		dtype = "8 in fp8 and 4 in bf16"
	}
	e.Add(Term{Name: TermUserBuffers, Part: PartOverhead, Bytes: b,
		Why: fmt.Sprintf("tp_comm_overlap: Transformer Engine's userbuffers, one a GEMM of a layer (12, %s) of (seq x micro batch / cp) x hidden, outside PyTorch's allocator", dtype)})
}
