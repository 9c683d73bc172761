package megatron

import (
	"strings"

	"github.com/mimoplan/mimoplan/internal/grid"
)

// Megatron-Bridge's examples/megatron_mimo/llava read each module's grid
// from MIMO_<PREFIX>_TP, _PP, _DP and _OFFSET (megatron_mimo_training_llava.py
// _build_parallelism_config): LLM for the language model, VISION and
// AUDIO for the encoders.
const (
	BridgeEnvPrefix = "MIMO_"
	bridgeLanguage  = "LLM"
)

// BridgeSuffixes are the variables of one module, in the order launch-plan
// writes them.
var BridgeSuffixes = []string{"TP", "PP", "DP", "OFFSET"}

// BridgeRead are the prefixes the llava examples read.
var BridgeRead = []string{bridgeLanguage, "VISION", "AUDIO"}

// BridgeEnvName is the prefix of a module's MIMO_* variables: LLM for the
// language module, the name in upper case for an encoder
// (vision -> VISION, audio -> AUDIO).
func BridgeEnvName(module string) string {
	if module == grid.LanguageModule {
		return bridgeLanguage
	}
	return strings.ToUpper(module)
}

// BridgeModuleName is the module of a MIMO_<PREFIX>_* variable.
func BridgeModuleName(prefix string) string {
	if prefix == bridgeLanguage {
		return grid.LanguageModule
	}
	return strings.ToLower(prefix)
}

// BridgeConfig is where Megatron-Bridge's ConfigContainer holds one
// training key: "ddp" (DistributedDataParallelConfig), "optimizer"
// (OptimizerConfig) or "transformer" (each module's TransformerConfig), as
// examples/megatron_mimo/llava/megatron_mimo_training_llava.py sets them
// (cfg.ddp.use_distributed_optimizer, cfg.optimizer.use_distributed_optimizer,
// cfg.ddp.grad_reduce_in_fp32 at lines 695-699; recompute_granularity and
// attention_backend on the module configs at 80-86, 067f987). The field
// is named as the key.
type BridgeConfig struct {
	Key     string
	Configs []string
}

// The config dataclasses, as options.json names them.
var bridgeClasses = map[string]string{
	"ddp": "DistributedDataParallelConfig", "optimizer": "OptimizerConfig", "transformer": "TransformerConfig",
}

// BridgeConfigs are in the order of the layout's training keys.
var BridgeConfigs = []BridgeConfig{
	{"use_distributed_optimizer", []string{"ddp", "optimizer"}},
	{"sequence_parallel", []string{"transformer"}},
	{"recompute_granularity", []string{"transformer"}},
	{"recompute_method", []string{"transformer"}},
	{"recompute_num_layers", []string{"transformer"}},
	{"recompute_modules", []string{"transformer"}},
	{"overlap_grad_reduce", []string{"ddp"}},
	{"overlap_param_gather", []string{"ddp"}},
	{"tp_comm_overlap", []string{"transformer"}},
	{"grad_reduce_in_fp32", []string{"ddp"}},
	{"moe_token_dispatcher_type", []string{"transformer"}},
	{"overlap_moe_expert_parallel_comm", []string{"transformer"}},
	{"moe_expert_capacity_factor", []string{"transformer"}},
	{"moe_pad_expert_input_to_capacity", []string{"transformer"}},
	{"transformer_impl", []string{"transformer"}},
	{"attention_backend", []string{"transformer"}},
	{"fp8", []string{"transformer"}},
	{"fp8_param_gather", []string{"ddp"}},
	{"overlap_p2p_comm", []string{"transformer"}},
	{"use_precision_aware_optimizer", []string{"optimizer"}},
	{"main_grads_dtype", []string{"optimizer"}},
	{"main_params_dtype", []string{"optimizer"}},
	{"exp_avg_dtype", []string{"optimizer"}},
	{"exp_avg_sq_dtype", []string{"optimizer"}},
	{"gradient_accumulation_fusion", []string{"transformer"}},
	{"defer_embedding_wgrad_compute", []string{"transformer"}},
	{"wgrad_deferral_limit", []string{"transformer"}},
	{"cross_entropy_loss_fusion", []string{"transformer"}},
	{"cross_entropy_fusion_impl", []string{"transformer"}},
}

// ConfigFields returns the field names of a config ("ddp", "optimizer",
// "transformer") at the Megatron-LM commit of options.json.
func ConfigFields(config string) []string {
	return options.ConfigFields[bridgeClasses[config]]
}
