package model

import "fmt"

// Rule ids of the training block's rules: what Megatron refuses of the
// training arguments at start-up (megatron/training/arguments.py and
// TransformerConfig.__post_init__ at d98e8a6).
const (
	RuleRecomputeFullNeedsMethod   = "recompute-full-needs-method"
	RuleRecomputeSelectiveNoMethod = "recompute-selective-no-method"
	RuleRecomputeSettingUnused     = "recompute-setting-unused"
	RuleOverlapParamGatherNeeds    = "overlap-param-gather-needs"
	RuleFP8ParamGatherNeeds        = "fp8-param-gather-needs"
	RuleTPCommOverlapNeedsSP       = "tp-comm-overlap-needs-sp"
	RuleLocalAttentionNeedsLocal   = "local-attention-needs-local-impl"
	RuleFP8NeedsTE                 = "fp8-needs-transformer-engine"
	RuleMoECommOverlapUnsupported  = "moe-comm-overlap-unsupported"
	RulePrecisionAwareNeeds        = "precision-aware-optimizer-needs"
	RuleOptimizerDtypeNeedsPA      = "optimizer-dtype-needs-precision-aware"
	RuleMainGradsNeedsBF16Reduce   = "main-grads-dtype-needs-bf16-reduce"
	RuleMoECapacityUnsupported     = "moe-capacity-unsupported"
	RuleRecomputeModuleUnsupported = "recompute-module-unsupported"
)

// checkTraining adds the training block's violations for a module with
// these (resolved) sizes.
func checkTraining(c Config, p Parallel, tr Training, add func(rule, key string, hint any, format string, args ...any)) {
	switch tr.RecomputeGranularity {
	case RecomputeFull:
		if tr.RecomputeMethod == "" {
			add(RuleRecomputeFullNeedsMethod, "training.recompute_granularity", "add recompute_method: uniform (or block) and recompute_num_layers: 1",
				"recompute_granularity full needs recompute_method (uniform or block)")
		}
		if tr.RecomputeNumLayers == 0 {
			add(RuleRecomputeFullNeedsMethod, "training.recompute_granularity", "add recompute_num_layers: 1 (layers per checkpoint with uniform)",
				"recompute_granularity full needs recompute_num_layers")
		}
	case RecomputeSelective:
		if tr.RecomputeMethod != "" {
			add(RuleRecomputeSelectiveNoMethod, "training.recompute_method", "remove recompute_method, or use recompute_granularity: full",
				"recompute_method %s with selective recompute: Megatron supports a method only for full recompute", tr.RecomputeMethod)
		}
		if tr.RecomputeNumLayers != 0 {
			add(RuleRecomputeSelectiveNoMethod, "training.recompute_num_layers", "remove recompute_num_layers, or use recompute_granularity: full",
				"recompute_num_layers with selective recompute: Megatron wants it unset")
		}
	default:
		if tr.RecomputeMethod != "" || tr.RecomputeNumLayers != 0 {
			key := "training.recompute_method"
			if tr.RecomputeMethod == "" {
				key = "training.recompute_num_layers"
			}
			add(RuleRecomputeSettingUnused, key, "set recompute_granularity: full, or remove it",
				"recompute_method and recompute_num_layers do nothing without recompute_granularity")
		}
	}
	if tr.OverlapParamGather && !tr.UseDistributedOptimizer {
		add(RuleOverlapParamGatherNeeds, "training.overlap_param_gather", "set use_distributed_optimizer: true, or remove overlap_param_gather",
			"overlap_param_gather needs the distributed optimizer")
	}
	if tr.OverlapParamGather && !tr.OverlapGradReduce {
		add(RuleOverlapParamGatherNeeds, "training.overlap_param_gather", "set overlap_grad_reduce: true as well",
			"overlap_param_gather needs overlap_grad_reduce")
	}
	if tr.FP8ParamGather && !tr.UseDistributedOptimizer {
		add(RuleFP8ParamGatherNeeds, "training.fp8_param_gather", "set use_distributed_optimizer: true, or remove fp8_param_gather",
			"fp8_param_gather needs the distributed optimizer")
	}
	if tr.TPCommOverlap && !tr.SequenceParallel {
		add(RuleTPCommOverlapNeedsSP, "training.tp_comm_overlap", "set sequence_parallel: true (with tp > 1), or remove tp_comm_overlap",
			"tp_comm_overlap needs sequence parallelism, which this module runs without")
	}
	if tr.AttentionBackend == "local" && tr.TransformerImpl != "local" {
		add(RuleLocalAttentionNeedsLocal, "training.attention_backend", "set transformer_impl: local, or another attention_backend",
			"attention_backend local runs only in Megatron's local layers (transformer_impl local)")
	}
	if tr.FP8 != "" && tr.TransformerImpl == "local" {
		add(RuleFP8NeedsTE, "training.fp8", "use transformer_impl: transformer_engine, or remove fp8",
			"fp8 %s needs Transformer Engine's layers; transformer_impl is local", tr.FP8)
	}
	recomputeModules(c, tr, add)
	if tr.OverlapMoEExpertParallelComm && c.NumExperts > 0 {
		moeCommOverlap(p, tr, add)
	}
}

// CheckOptimizer returns what Megatron refuses of the precision-aware
// optimizer's keys, which read the training block alone (no model, no
// sizes): validate checks them once for the layout.
func CheckOptimizer(tr Training) []Violation {
	var out []Violation
	optimizerDtypes(tr, func(rule, key string, hint any, format string, args ...any) {
		out = append(out, Violation{Rule: rule, Key: key, Hint: hint.(string), Message: fmt.Sprintf(format, args...)})
	})
	return out
}

// recomputeModules checks what TransformerConfig refuses of
// recompute_modules under selective recompute (transformer_config.py:1964-1973,
// :2000-2012 at d98e8a6): mla_up_proj without multi-latent attention;
// moe_act without grouped experts (moe_grouped_gemm, which launch plans
// leave at Megatron's default, off); and moe_act or layernorm with fp8
// under delayed scaling, the fp8 recipe launch plans leave at Megatron's
// default.
func recomputeModules(c Config, tr Training, add func(rule, key string, hint any, format string, args ...any)) {
	const key = "training.recompute_modules"
	if tr.Recomputes("mla_up_proj") && !c.MultiLatentAttention {
		add(RuleRecomputeModuleUnsupported, key, "remove mla_up_proj, or give the model multi_latent_attention",
			"mla_up_proj in recompute_modules needs multi-latent attention, which this model does not have")
	}
	if tr.Recomputes("moe_act") {
		add(RuleRecomputeModuleUnsupported, key, "remove moe_act (recompute moe or mlp instead)",
			"moe_act in recompute_modules needs grouped experts (moe_grouped_gemm), which launch plans leave at Megatron's default, off")
	}
	if tr.FP8 != "" && tr.Recomputes("layernorm") {
		add(RuleRecomputeModuleUnsupported, key, "remove layernorm, or fp8",
			"layernorm in recompute_modules with fp8: Megatron refuses it under delayed scaling, the fp8 recipe launch plans leave at its default")
	}
}

// CheckMoECapacity returns what TransformerConfig refuses of padding the
// experts' inputs to capacity, which reads the training block alone:
// padding without a capacity to pad to (transformer_config.py:1862-1866 at
// d98e8a6), and the flex dispatcher, whose default backend, DeepEP, cannot
// pad (:1754-1761; the layout cannot choose HybridEP). Megatron checks
// every module's config, whether it has experts or not.
// testdata/moe-capacity-megatron.json (scripts/gen-moe-capacity-fixtures.py)
// holds upstream's verdicts.
func CheckMoECapacity(tr Training) []Violation {
	if !tr.MoEPadExpertInputToCapacity {
		return nil
	}
	const key = "training.moe_pad_expert_input_to_capacity"
	if tr.MoETokenDispatcherType == "flex" {
		return []Violation{{Rule: RuleMoECapacityUnsupported, Key: key, Hint: "use moe_token_dispatcher_type: alltoall, or remove moe_pad_expert_input_to_capacity",
			Message: "moe_pad_expert_input_to_capacity with the flex dispatcher: its default backend, DeepEP, cannot pad to capacity"}}
	}
	if tr.MoEExpertCapacityFactor == 0 {
		return []Violation{{Rule: RuleMoECapacityUnsupported, Key: key, Hint: "set moe_expert_capacity_factor (1 pads each expert to its even share), or remove moe_pad_expert_input_to_capacity",
			Message: "moe_pad_expert_input_to_capacity needs moe_expert_capacity_factor: without it there is no capacity to pad to"}}
	}
	return nil
}

// optimizerDtypes checks the precision-aware optimizer's keys:
// get_megatron_optimizer raises without the distributed optimizer
// (megatron/core/optimizer/__init__.py:1057-1060), OptimizerConfig wants
// Transformer Engine's FusedAdam with it (optimizer_config.py:441-467)
// and fp32 for every dtype without it (:469-480), and a bf16 main_grads_dtype
// is a bf16 gradient reduction in Megatron-LM (arguments.py:1209-1217),
// which grad_reduce_in_fp32 (false by default then) must not contradict.
func optimizerDtypes(tr Training, add func(rule, key string, hint any, format string, args ...any)) {
	const pao = "training.use_precision_aware_optimizer"
	if tr.UsePrecisionAwareOptimizer && !tr.UseDistributedOptimizer {
		add(RulePrecisionAwareNeeds, pao, "set use_distributed_optimizer: true, or remove use_precision_aware_optimizer",
			"use_precision_aware_optimizer needs the distributed optimizer")
	}
	if tr.UsePrecisionAwareOptimizer && tr.TransformerImpl == ImplLocal {
		add(RulePrecisionAwareNeeds, pao, "use transformer_impl: transformer_engine, or remove use_precision_aware_optimizer",
			"use_precision_aware_optimizer needs Transformer Engine's FusedAdam; transformer_impl local is a stack without Transformer Engine")
	}
	if !tr.UsePrecisionAwareOptimizer {
		for _, d := range []struct{ key, value string }{
			{"main_grads_dtype", tr.MainGradsDtype}, {"main_params_dtype", tr.MainParamsDtype},
			{"exp_avg_dtype", tr.ExpAvgDtype}, {"exp_avg_sq_dtype", tr.ExpAvgSqDtype},
		} {
			if d.value != DtypeFP32 {
				add(RuleOptimizerDtypeNeedsPA, "training."+d.key, "set use_precision_aware_optimizer: true (with the distributed optimizer), or remove "+d.key,
					"%s %s without the precision-aware optimizer: Megatron keeps it in fp32 only", d.key, d.value)
			}
		}
	}
	if tr.MainGradsDtype == DtypeBF16 && !tr.GradReduceInBF16 {
		add(RuleMainGradsNeedsBF16Reduce, "training.main_grads_dtype", "remove grad_reduce_in_fp32: true (with main_grads_dtype bf16 it defaults to false)",
			"main_grads_dtype bf16 accumulates and reduces the gradients in bf16, but grad_reduce_in_fp32 is true")
	}
}

// moeCommOverlap checks TransformerConfig's requirements of
// overlap_moe_expert_parallel_comm (transformer_config.py:3002-3029).
func moeCommOverlap(p Parallel, tr Training, add func(rule, key string, hint any, format string, args ...any)) {
	const key = "training.overlap_moe_expert_parallel_comm"
	if p.EP <= 1 {
		add(RuleMoECommOverlapUnsupported, key, "use ep > 1, or remove overlap_moe_expert_parallel_comm",
			"overlap_moe_expert_parallel_comm needs expert parallelism (ep > 1)")
	}
	if d := tr.MoETokenDispatcherType; d != "alltoall" && d != "flex" {
		add(RuleMoECommOverlapUnsupported, key, "set moe_token_dispatcher_type: alltoall",
			"overlap_moe_expert_parallel_comm needs the alltoall or flex token dispatcher, not allgather")
	}
	if tr.RecomputeGranularity == RecomputeFull || tr.RecomputeMethod != "" || tr.RecomputeNumLayers != 0 {
		add(RuleMoECommOverlapUnsupported, key, "use selective recompute or none",
			"overlap_moe_expert_parallel_comm excludes full recompute (recompute_method, recompute_num_layers)")
	}
	// A pipeline_model_parallel_layout implies its vpp (arguments.py:950).
	// One whose stages are not a multiple of pp still counts by its floor:
	// pipeline-layout-invalid refuses it, and this rule asks only whether
	// a virtual pipeline was meant.
	if v, _ := VirtualPipeline(p.VPP, p.PP, p.Split.Layout); p.PP > 1 && v == 0 {
		add(RuleMoECommOverlapUnsupported, key, "add vpp (> 1) to the module",
			"overlap_moe_expert_parallel_comm with pp %d needs a virtual pipeline (vpp)", p.PP)
	}
}
