package megatron

// ModelFlag is how Megatron-LM's parser takes one model destination
// (megatron/training/arguments.py, and the TransformerConfig fields its
// ArgumentGroupFactory turns into flags).
type ModelFlag struct {
	Dest, Flag string
	// On is the value for which a flag without a value is passed ("" for
	// a flag that takes the value): --swiglu for true, --disable-bias-linear
	// for add_bias_linear false.
	On string
}

// GroupQueryAttention is the switch Megatron-LM wants before
// --num-query-groups counts.
const GroupQueryAttention = "--group-query-attention"

// BF16 is the precision mimoplan's estimate assumes for a model (2-byte
// parameters and activations, fp32 main parameters and optimizer state:
// megatron/training/theoretical_memory_usage.py at d98e8a6), so a plan
// with a model passes it; Megatron-LM's own default is fp32. Upstream's
// MIMO examples and functional tests pass it too
// (examples/mimo/scripts/run_vlm_train.sh:73,
// tests/functional_tests/test_cases/mimo/*/model_config.yaml:44).
const BF16 = "--bf16"

// FP16 is Megatron-LM's other half-precision switch: validate_args
// asserts it and --bf16 exclude one another (arguments.py:1195-1206).
const FP16 = "--fp16"

// ModelFlags are the model destinations launch-plan writes, in its order.
var ModelFlags = []ModelFlag{
	{"num_layers", "--num-layers", ""},
	{"hidden_size", "--hidden-size", ""},
	{"ffn_hidden_size", "--ffn-hidden-size", ""},
	{"num_attention_heads", "--num-attention-heads", ""},
	{"num_query_groups", "--num-query-groups", ""},
	{"kv_channels", "--kv-channels", ""},
	{"seq_length", "--seq-length", ""},
	{"vocab_size", "--vocab-size", ""},
	{"make_vocab_size_divisible_by", "--make-vocab-size-divisible-by", ""},
	{"swiglu", "--swiglu", "true"},
	{"normalization", "--normalization", ""},
	{"untie_embeddings_and_output_weights", "--untie-embeddings-and-output-weights", "true"},
	{"add_bias_linear", "--disable-bias-linear", "false"},
	{"attention_output_gate", "--attention-output-gate", "true"},
	{"moe_ffn_hidden_size", "--moe-ffn-hidden-size", ""},
	{"moe_router_topk", "--moe-router-topk", ""},
	{"moe_layer_freq", "--moe-layer-freq", ""},
	{"moe_shared_expert_intermediate_size", "--moe-shared-expert-intermediate-size", ""},
	{"moe_shared_expert_gate", "--moe-shared-expert-gate", "true"},
	{"moe_latent_size", "--moe-latent-size", ""},
	{"moe_router_pre_softmax", "--moe-router-pre-softmax", "true"},
	{"moe_router_score_function", "--moe-router-score-function", ""},
	{"mtp_num_layers", "--mtp-num-layers", ""},
	{"multi_latent_attention", "--multi-latent-attention", "true"},
	{"q_lora_rank", "--q-lora-rank", ""},
	{"kv_lora_rank", "--kv-lora-rank", ""},
	{"qk_head_dim", "--qk-head-dim", ""},
	{"qk_pos_emb_head_dim", "--qk-pos-emb-head-dim", ""},
	{"v_head_dim", "--v-head-dim", ""},
}
