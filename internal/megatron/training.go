package megatron

import "strings"

// TrainingFlag is how Megatron-LM's parser takes one key of the layout's
// training block (layout.TrainingKeys; the key named as the destination):
// a flag without a value for a bool (passed when the key's value is On),
// else Flag VALUE with the layout's value. Sources at d98e8a6:
// megatron/training/arguments.py, and the TransformerConfig and
// ModelParallelConfig fields its ArgumentGroupFactory turns into flags.
type TrainingFlag struct {
	Key, Flag string
	On        string
	// List: the flag takes the key's items, each a word (argparse's
	// nargs "+").
	List bool
	// Aliases are the other arguments that set the key, each with the
	// value it sets (a program argument that contradicts the layout
	// through one is refused like one through Flag).
	Aliases []Alias
}

// Alias is another argument that sets a training key: a flag and the
// value it gives the key. Wins is set when validate_args applies it over
// the key's own flag.
type Alias struct {
	Flag, Value string
	Wins        bool
}

// TrainingFlags are in the order of the layout's training keys.
var TrainingFlags = []TrainingFlag{
	{Key: "use_distributed_optimizer", Flag: "--use-distributed-optimizer", On: "true"},
	{Key: "sequence_parallel", Flag: "--sequence-parallel", On: "true"},
	// validate_args: --recompute-activations is recompute_granularity
	// selective (arguments.py:607-608).
	{Key: "recompute_granularity", Flag: "--recompute-granularity", Aliases: []Alias{{"--recompute-activations", "selective", true}}},
	{Key: "recompute_method", Flag: "--recompute-method"},
	{Key: "recompute_num_layers", Flag: "--recompute-num-layers"},
	// A List[str] field: ArgumentGroupFactory gives it nargs "+"
	// (argument_utils.py:143-147), each module a word.
	{Key: "recompute_modules", Flag: "--recompute-modules", List: true},
	{Key: "overlap_grad_reduce", Flag: "--overlap-grad-reduce", On: "true"},
	{Key: "overlap_param_gather", Flag: "--overlap-param-gather", On: "true"},
	{Key: "tp_comm_overlap", Flag: "--tp-comm-overlap", On: "true"},
	// Under --bf16 validate_args reduces gradients in fp32 unless
	// --grad-reduce-in-bf16 (arguments.py:1204-1217), which
	// --accumulate-allreduce-grads-in-fp32 asks for outright.
	{Key: "grad_reduce_in_fp32", Flag: "--grad-reduce-in-bf16", On: "false", Aliases: []Alias{{"--accumulate-allreduce-grads-in-fp32", "true", false}}},
	{Key: "moe_token_dispatcher_type", Flag: "--moe-token-dispatcher-type"},
	{Key: "overlap_moe_expert_parallel_comm", Flag: "--overlap-moe-expert-parallel-comm", On: "true"},
	// TransformerConfig's fields (transformer_config.py:917, :921).
	{Key: "moe_expert_capacity_factor", Flag: "--moe-expert-capacity-factor"},
	{Key: "moe_pad_expert_input_to_capacity", Flag: "--moe-pad-expert-input-to-capacity", On: "true"},
	{Key: "transformer_impl", Flag: "--transformer-impl"},
	{Key: "attention_backend", Flag: "--attention-backend"},
	// TransformerConfig.fp8's argparse_meta names it --fp8-format.
	{Key: "fp8", Flag: "--fp8-format"},
	{Key: "fp8_param_gather", Flag: "--fp8-param-gather", On: "true"},
	// store_false, dest overlap_p2p_comm (arguments.py:3118).
	{Key: "overlap_p2p_comm", Flag: "--no-overlap-p2p-communication", On: "false"},
	// The precision-aware optimizer (arguments.py:3667-3684).
	{Key: "use_precision_aware_optimizer", Flag: "--use-precision-aware-optimizer", On: "true"},
	{Key: "main_grads_dtype", Flag: "--main-grads-dtype"},
	{Key: "main_params_dtype", Flag: "--main-params-dtype"},
	{Key: "exp_avg_dtype", Flag: "--exp-avg-dtype"},
	{Key: "exp_avg_sq_dtype", Flag: "--exp-avg-sq-dtype"},
	// store_false, dest gradient_accumulation_fusion (arguments.py:2944-2948).
	{Key: "gradient_accumulation_fusion", Flag: "--no-gradient-accumulation-fusion", On: "false"},
	// ModelParallelConfig's fields, as ArgumentGroupFactory spells them
	// (model_parallel_config.py:410-421).
	{Key: "defer_embedding_wgrad_compute", Flag: "--defer-embedding-wgrad-compute", On: "true"},
	{Key: "wgrad_deferral_limit", Flag: "--wgrad-deferral-limit"},
	// ModelParallelConfig's fields (model_parallel_config.py:320, :325).
	{Key: "cross_entropy_loss_fusion", Flag: "--cross-entropy-loss-fusion", On: "true"},
	{Key: "cross_entropy_fusion_impl", Flag: "--cross-entropy-fusion-impl"},
}

// TrainingFlagOf returns the flag of a training key.
func TrainingFlagOf(key string) (TrainingFlag, bool) {
	for _, f := range TrainingFlags {
		if f.Key == key {
			return f, true
		}
	}
	return TrainingFlag{}, false
}

// TrainingArgs writes stated training settings (key, value pairs that
// differ from Megatron's defaults, as layout.Training.Stated gives them)
// as Megatron-LM arguments.
func TrainingArgs(stated [][2]string) []string {
	var args []string
	for _, kv := range stated {
		f, ok := TrainingFlagOf(kv[0])
		switch {
		case !ok:
		case f.List:
			// A list key: its items, each a word.
			args = append(args, f.Flag)
			args = append(args, strings.Split(strings.Trim(kv[1], "[]"), ", ")...)
		case f.On == "":
			args = append(args, f.Flag, kv[1])
		case kv[1] == f.On:
			args = append(args, f.Flag)
		}
	}
	return args
}
