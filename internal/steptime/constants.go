package steptime

// Constants are the calibrated model's figures that no data sheet gives.
// Fitted holds the values fitted to the fit rows of
// testdata/calibration/published.yaml (TestCalibrationFit, run with
// -fit, searches them and prints them; TestCalibration holds the agreement
// they reach).
type Constants struct {
	// GEMMEfficiency is the fraction of the GEMM peak an unbounded GEMM
	// reaches; WidthHalf and TokensHalf the weight-shard width and the
	// token count at which a GEMM reaches half of it (gemmEff).
	GEMMEfficiency, WidthHalf, TokensHalf float64
	// FP8Efficiency is the share of the FP8 data-sheet peak FP8 GEMMs
	// reach relative to BF16 ones (scaling, casts and amax bookkeeping).
	FP8Efficiency float64
	// AttnEfficiency is the fraction of the BF16 peak fused attention
	// reaches (FlashAttention-2 reaches 35% of an H100's peak forward and
	// backward at head dim 128: Dao 2023, fig. 7; cuDNN's fused attention
	// more).
	AttnEfficiency float64
	// UnfusedAttention is unfused attention's speed relative to fused: 0.2,
	// standard PyTorch attention against FlashAttention-2 at head dim 128,
	// forward and backward (Dao 2023, fig. 4). (The local stack's
	// element-wise traffic is measured: LocalConstants.)
	UnfusedAttention float64
	// ElementwiseBytes is the bf16 memory traffic of the memory-bound work
	// per token, hidden unit and layer, in bytes.
	ElementwiseBytes float64
	// CollectiveEfficiency is the share of the data-sheet link bandwidth a
	// collective reaches (NCCL's bus bandwidth).
	CollectiveEfficiency float64
	// TPExposed and EPExposed are the shares of tp and of the token
	// dispatcher's communication left exposed with tp_comm_overlap and
	// overlap_moe_expert_parallel_comm.
	TPExposed, EPExposed float64
	// MoESync is the stall of the dispatcher's host synchronisation, in
	// seconds per MoE layer and micro-batch (epComm).
	MoESync float64
	// PPExposed is the share of the pipeline's sends left exposed with
	// the interleaved schedule; PPSync the fixed cost of a (virtual)
	// stage's send and receive per micro-batch and pass, in seconds.
	PPExposed, PPSync float64
}

// Fitted are the constants fitted on the fit rows (see Constants).
var Fitted = Constants{
	GEMMEfficiency:       0.864,
	WidthHalf:            1,
	TokensHalf:           917,
	FP8Efficiency:        0.7618,
	AttnEfficiency:       0.2,
	UnfusedAttention:     0.2,
	ElementwiseBytes:     96.44,
	CollectiveEfficiency: 1,
	TPExposed:            0.323,
	EPExposed:            0.4827,
	MoESync:              0.00566,
	PPExposed:            0.1132,
	PPSync:               0,
}
