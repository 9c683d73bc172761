package megatron

// The language module's pipeline arguments (megatron/training/arguments.py
// :3095-3116 at d98e8a6), each named as its layout key's destination.
const (
	VirtualStages    = "--num-virtual-stages-per-pipeline-rank" // vpp
	DecoderFirst     = "--decoder-first-pipeline-num-layers"
	DecoderLast      = "--decoder-last-pipeline-num-layers"
	AccountEmbedding = "--account-for-embedding-in-pipeline-split"
	AccountLoss      = "--account-for-loss-in-pipeline-split"
	PipelineLayout   = "--pipeline-model-parallel-layout"
)

// The MIMO example's freeze switches
// (examples/mimo/model_providers/nemotron_moe_vlm.py:65-66 at d98e8a6): the
// language model, and the encoder's backbone.
const (
	FreezeLanguage = "--freeze-lm"
	FreezeEncoder  = "--freeze-vit"
)
