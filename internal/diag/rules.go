package diag

import "slices"

// Rule describes one stable rule id. docs/rules.md is the long form of this
// table; a test keeps the two in step.
type Rule struct {
	ID       RuleID
	Severity Severity
	Summary  string
	// Source names the Megatron code (or other authority) the rule mirrors.
	Source string
}

// catalogue lists every rule, in the order docs/rules.md presents them.
var catalogue = []Rule{
	// Input and spec rules.
	{RuleUnreadableFile, Error, "The file cannot be read: missing, not a regular file, or not readable.", "the operating system"},
	{RuleYAMLSyntax, Error, "The file is not well-formed YAML, or not a YAML mapping.", "YAML 1.2"},
	{RuleUnknownField, Error, "A key that the layout format does not define.", "docs/layout.md"},
	{RuleInvalidValue, Error, "A value of the wrong type, out of range, or missing where it is required.", "docs/layout.md"},
	{RuleUnsupportedVersion, Error, "The layout's version is not one this mimoplan reads.", "docs/layout.md"},
	{RuleWorldSizeMismatch, Error, "world_size disagrees with cluster.nodes * cluster.gpus_per_node.", "docs/layout.md"},
	{RuleDuplicateModule, Error, "Two modules share a name.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/topology.py:108 (create_topology keeps the last module of a repeated name, silently)"},
	{RuleMissingLanguageModule, Error, "There is not exactly one module named language.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/topology.py:97"},
	{RuleDPMismatch, Error, "dp and num_ranks are both given and num_ranks != tp*gtp_remat*cp*pp*dp.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/topology.py:50 (ModuleGridSpec derives dp from num_ranks; a layout that gives both must agree)"},
	{RuleDenseNotDivisible, Error, "num_ranks is not divisible by tp*gtp_remat*cp*pp.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/topology.py:46"},
	{RuleExpertNotDivisible, Error, "num_ranks is not divisible by expt_tp*ep*expt_gtp_remat*pp.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/topology.py:52"},
	{RuleExpertsNotDivisible, Error, "num_experts is not divisible by ep.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/moe/moe_layer.py:186"},
	{RuleSpanOutOfWorld, Error, "A module's rank span [rank_offset, rank_offset+num_ranks) leaves [0, world_size).", "Megatron-LM@d98e8a64ddf3 megatron/core/hyper_comm_grid.py:124"},
	{RuleSpanOverlap, Error, "Module spans are neither all identical (colocated) nor pairwise disjoint.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/topology.py:201"},
	{RuleWorldGap, Error, "Some ranks of the world belong to no module.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/topology.py:211"},

	// Communicator rules.
	{RuleBridgeLeadersNotDivisible, Error, "Encoder and language data-lane counts (dp*gtp_remat) do not divide one another.", "Megatron-LM@d98e8a64ddf3 megatron/core/pipeline_parallel/bridge_communicator.py:306"},
	{RuleBridgeCPUnsupported, Error, "The cross-module bridge needs cp 1 on both ends.", "Megatron-LM@d98e8a64ddf3 megatron/core/pipeline_parallel/bridge_communicator.py:109, :115"},
	{RuleColocatedPPCPUnsupported, Error, "Colocated modules need pp 1, and cp 1 unless they can all run on the language module's groups.", "Megatron-LM@d98e8a64ddf3 megatron/core/models/mimo/comm/colocated_communicator.py:143, megatron/core/models/mimo/model/base.py:68, megatron/core/models/mimo/config/role.py:93"},
	{RuleDPNotCompatible, Error, "Two modules' dp sizes do not divide one another.", "Megatron-LM@d98e8a64ddf3 megatron/core/models/mimo/comm/colocated_communicator.py:151; Megatron-Bridge@067f987df03b src/megatron/bridge/models/megatron_mimo/megatron_mimo_config.py:198"},
	{RuleFanInUnevenTokens, Warning, "Non-colocated: an encoder's dp exceeds the language module's dp*gtp_remat (fan-in), which fails when samples carry different numbers of modality tokens.", "Megatron-LM@d98e8a64ddf3 megatron/core/models/mimo/model/base.py:563"},

	// Batch rules.
	{RuleFanoutNotDivisible, Error, "An encoder's micro-batch (mbs*llm_dp*llm_gtp_remat/encoder_dp) is not whole.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/data.py:297, examples/mimo/training/args.py:102"},
	{RuleGlobalBatchNotDivisible, Error, "global_batch_size is not divisible by the per-step batch.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:715, megatron/core/num_microbatches_calculator.py:381; Megatron-Bridge@067f987df03b src/megatron/bridge/training/megatron_mimo_parallel_utils.py:393, :407"},
	{RuleMicroBatchNotDivisible, Error, "micro_batch_size is not divisible by a module's dp.", "Megatron-Bridge@067f987df03b src/megatron/bridge/training/megatron_mimo_parallel_utils.py:403"},
	{RuleGlobalBatchRequired, Error, "Target megatron-bridge: batch has no global_batch_size.", "Megatron-Bridge@067f987df03b src/megatron/bridge/training/config.py:2079"},
	{RuleGlobalBatchDefaultNotDivisible, Warning, "Target megatron-lm: a batch without global_batch_size while the language module has gtp_remat above 1.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:703, :715"},
	{RuleInterleavedMicrobatches, Error, "Target core: a module with pp above 1 and a virtual pipeline runs the interleaved schedule, which needs the micro-batches of a step to be a multiple of pp.", "Megatron-LM@d98e8a64ddf3 megatron/core/pipeline_parallel/schedules.py:163, :1168, :1180, megatron/core/model_parallel_config.py:567"},

	// Model rules.
	{RuleHeadsNotDivisible, Error, "A module's num_attention_heads is not a multiple of its tp.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_config.py:1446"},
	{RuleQueryGroupsNotDivisible, Error, "num_query_groups is neither a multiple nor a divisor of tp.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_config.py:1461"},
	{RuleHiddenNotDivisible, Error, "hidden_size is not a multiple of num_attention_heads and kv_channels is not given.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1332"},
	{RuleFFNNotDivisible, Error, "ffn_hidden_size (or moe_shared_expert_intermediate_size) is not a multiple of tp, or moe_ffn_hidden_size of expt_tp.", "Megatron-LM@d98e8a64ddf3 megatron/core/tensor_parallel/layers.py:1038, :1408"},
	{RuleLayersNotDivisible, Error, "num_layers (with the embedding and loss when accounted for) is not divisible by pp.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:997, megatron/core/transformer/transformer_block.py:156, megatron/core/transformer/transformer_config.py:2383"},
	{RuleLayersNotDivisibleVPP, Error, "The layers of each pipeline stage are not divisible by vpp.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_block.py:175, megatron/core/transformer/transformer_config.py:2396, :2409"},
	{RuleVPPNeedsPP, Error, "vpp (the interleaved schedule) with pp 1.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1002"},
	{RulePipelineSplitConflict, Error, "Pipeline split keys that exclude one another (first/last stage sizes, account_for_*, the layout, vpp with a layout).", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:928, megatron/core/transformer/transformer_config.py:2235, :2252"},
	{RulePipelineSplitUneven, Error, "The first/last stage sizes leave the middle stages an uneven share, or break vpp.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_config.py:2312, :2331, :2342, :2350, :2364"},
	{RulePipelineLayoutInvalid, Error, "pipeline_model_parallel_layout does not fit pp, num_layers or mtp_num_layers.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:945, megatron/core/transformer/pipeline_parallel_layer_layout.py:95, :98, :103, :106, :107, :112, :117, :123, :129, :315"},
	{RulePipelineSplitLayersMismatch, Error, "The stages would build another number of layers than num_layers (pp 1 with both first and last stage sizes).", "mimoplan (Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_block.py:145 gives the single stage decoder_last_pipeline_num_layers)"},
	{RuleSeqNotDivisibleCP, Error, "seq_length is not a multiple of 2*cp when cp > 1.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1336"},
	{RuleSeqNotDivisibleSP, Error, "With sequence_parallel, seq_length/cp is not divisible by tp.", "Megatron-LM@d98e8a64ddf3 megatron/core/tensor_parallel/mappings.py:72"},
	{RuleSequenceParallelNeedsTP, Warning, "sequence_parallel on a module with tp 1, where Megatron turns it off.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1433"},
	{RuleTopKExceedsExperts, Error, "moe_router_topk is more than num_experts.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/moe/moe_utils.py:726"},
	{RuleTopKOneNeedsPreSoftmax, Error, "moe_router_topk 1 with a softmax router and no moe_router_pre_softmax.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_config.py:2669"},
	{RuleEPNeedsExperts, Error, "ep above 1 on a module whose model has no experts.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1656"},
	{RuleMoELayerFreqLength, Error, "A moe_layer_freq list does not have one entry per layer.", "Megatron-LM@d98e8a64ddf3 megatron/core/models/gpt/gpt_layer_specs.py:653"},
	{RuleMLAWithGQA, Error, "multi_latent_attention together with num_query_groups.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1974"},
	{RuleMoELatentNeedsExperts, Error, "moe_latent_size on a model without num_experts.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1982"},
	{RuleMoETPNeedsSequenceParallel, Error, "An MoE model with tp above 1 and no sequence parallelism: the first training step raises.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/moe/moe_layer.py:636"},
	{RuleRecomputeFullNeedsMethod, Error, "Full recompute without recompute_method or recompute_num_layers.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_config.py:1913, :1919"},
	{RuleRecomputeSelectiveNoMethod, Error, "Selective recompute with recompute_method or recompute_num_layers.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1425, megatron/core/transformer/transformer_config.py:1926"},
	{RuleRecomputeSettingUnused, Warning, "recompute_method or recompute_num_layers without recompute_granularity, which Megatron ignores.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_config.py:1901"},
	{RuleOverlapParamGatherNeeds, Error, "overlap_param_gather without the distributed optimizer or without overlap_grad_reduce.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1024-1028"},
	{RuleFP8ParamGatherNeeds, Error, "fp8_param_gather without the distributed optimizer.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1095-1097"},
	{RulePrecisionAwareNeeds, Error, "use_precision_aware_optimizer without the distributed optimizer, or on the local layers (no Transformer Engine FusedAdam).", "Megatron-LM@d98e8a64ddf3 megatron/core/optimizer/__init__.py:1057-1060, megatron/core/optimizer/optimizer_config.py:441-467"},
	{RuleOptimizerDtypeNeedsPA, Error, "An optimizer dtype (main_grads_dtype, main_params_dtype, exp_avg_dtype, exp_avg_sq_dtype) other than fp32 without use_precision_aware_optimizer.", "Megatron-LM@d98e8a64ddf3 megatron/core/optimizer/optimizer_config.py:469-480"},
	{RuleMainGradsNeedsBF16Reduce, Error, "main_grads_dtype bf16 with grad_reduce_in_fp32 stated true: Megatron-LM asserts (--accumulate-allreduce-grads-in-fp32) or reduces in bf16.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1209-1217"},
	{RuleDeferWgradNeeds, Error, "defer_embedding_wgrad_compute with the language module at pp 1, or with gradient_accumulation_fusion false.", "Megatron-LM@d98e8a64ddf3 megatron/core/model_parallel_config.py:545-553"},
	{RuleWgradDeferralNegative, Error, "defer_embedding_wgrad_compute with a negative wgrad_deferral_limit.", "Megatron-LM@d98e8a64ddf3 megatron/core/model_parallel_config.py:555-558"},
	{RuleTECrossEntropyDisabled, Error, "cross_entropy_loss_fusion with cross_entropy_fusion_impl te: target megatron-lm from Megatron-LM PR #5115, targets core and megatron-bridge from PR #5115 until PR #5162.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1697-1702; Megatron-LM@168cb15d70ad megatron/core/model_parallel_config.py:437-440 (PR #5115)"},
	{RuleTECrossEntropyUnstable, Warning, "cross_entropy_loss_fusion with cross_entropy_fusion_impl te, targets core and megatron-bridge from Megatron-LM PR #5162: ModelParallelConfig warns of its stability.", "Megatron-LM@d98e8a64ddf3 megatron/core/model_parallel_config.py:536-543"},
	{RuleDeviceConnections, Warning, "The layout's env sets CUDA_DEVICE_MAX_CONNECTIONS to other than 1 beside tensor parallelism, or to 1 beside overlap_moe_expert_parallel_comm.", "Megatron-LM@d98e8a64ddf3 megatron/core/tensor_parallel/layers.py:908-924, megatron/core/transformer/moe/README.md:437; Megatron-Bridge@7af9601c scripts/performance/perf_plugins.py:227-234"},
	{RuleTPCommOverlapNeedsSP, Error, "tp_comm_overlap on a module without sequence parallelism.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1441"},
	{RuleLocalAttentionNeedsLocal, Error, "attention_backend local with Transformer Engine layers.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:436"},
	{RuleFP8NeedsTE, Warning, "fp8 with transformer_impl local, whose layers have no fp8 path.", "Megatron-LM@d98e8a64ddf3 megatron/core/models/gpt/gpt_layer_specs.py:194"},
	{RuleMoECommOverlapUnsupported, Error, "overlap_moe_expert_parallel_comm without ep > 1, the alltoall/flex dispatcher or vpp (with pp > 1), or with full recompute or more than one MTP layer.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_config.py:3002-3029, :3042"},
	{RuleMoECapacityUnsupported, Error, "moe_pad_expert_input_to_capacity without moe_expert_capacity_factor, or with the flex dispatcher (its default backend, DeepEP, cannot pad).", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_config.py:1754-1761, :1862-1866"},
	{RuleRecomputeModuleUnsupported, Error, "recompute_modules names mla_up_proj without multi-latent attention, moe_act (it needs grouped experts, which launch plans do not turn on), or layernorm with fp8 (not under delayed scaling, Megatron's default fp8 recipe).", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_config.py:1964-1973, :2000-2006"},
	{RuleMoEBiasNeedsExptTP1, Error, "An MoE model with linear biases (add_bias_linear, true by default) and expt_tp above 1.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_config.py:2613"},
	{RuleMLAOutputGateUnsupported, Error, "multi_latent_attention with attention_output_gate.", "Megatron-LM@d98e8a64ddf3 megatron/core/transformer/transformer_config.py:3349"},
	{RuleGPUMemoryShort, Error, "A module's estimated memory per GPU exceeds cluster.gpu_memory (or the GPU's, with --probe).", "Megatron-LM@d98e8a64ddf3 megatron/training/theoretical_memory_usage.py:456"},

	// Target megatron-lm.
	{RuleColocatedUnsupported, Error, "The target runtime cannot run colocated modules.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/args.py:114; Megatron-Bridge@067f987df03b src/megatron/bridge/models/megatron_mimo/megatron_mimo_config.py:141"},
	{RuleTooManyEncoders, Error, "The target runtime supports at most one encoder.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/args.py:151 (one encoder grid spec)"},
	{RuleEncoderNotFirst, Error, "The encoder's span must start at rank 0.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/args.py:110"},
	{RuleCPUnsupported, Error, "The target runtime needs cp 1 everywhere.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/args.py:66"},
	{RuleEncoderParallelismUnsupported, Error, "The encoder needs pp, ep, expt_tp, gtp_remat and expt_gtp_remat 1.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/args.py:151 (the encoder grid: tp and dp, the rest 1)"},
	{RuleTargetVersionTooOld, Error, "target_version predates the MIMO example's grid arguments.", "Megatron-LM PR #5375 (examples/mimo/training/args.py)"},
	{RuleMIMONeedsDistributedOptimizer, Error, "Target megatron-lm without the distributed optimizer, which the MIMO example requires.", "Megatron-LM@d98e8a64ddf3 examples/mimo/pretrain_mimo.py:66-67"},
	{RuleMIMOVPPUnsupported, Error, "Targets megatron-lm and megatron-bridge: a module with pp above 1 and a virtual pipeline, which their MIMO training cannot run (one model chunk, the non-interleaved schedule).", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:820, :825, examples/mimo/training/builder.py:78, megatron/core/pipeline_parallel/schedules.py:154, megatron/core/transformer/transformer_layer.py:197; Megatron-Bridge@067f987df03b src/megatron/bridge/training/train_megatron_mimo.py:108"},
	{RuleMIMOSplitUnsupported, Error, "Target megatron-lm (from PR #5602): the language module has pipeline_model_parallel_layout or account_for_embedding/loss_in_pipeline_split, which the MIMO example refuses beside its --hybrid-layer-pattern.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:825, :829, :834, examples/mimo/model_providers/nemotron_moe_vlm.py:209"},
	{RuleVPPNeedsPPWithoutP2POverlap, Error, "Target megatron-lm: the language module's virtual pipeline at pp below 3 with overlap_p2p_comm false (batched sends: at pp 2 two of a batch go to one peer).", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:1006, :3118, megatron/training/argument_utils.py:307"},
	{RuleGTPNeedsNewerVersion, Error, "GTP needs a Megatron-LM with PR #6570.", "Megatron-LM PR #6570 (examples/mimo/training/args.py)"},
	{RuleLLMOnlyNotWholeWorld, Error, "A single language module must cover the world from rank 0.", "Megatron-LM@d98e8a64ddf3 examples/mimo/training/args.py:86, :92"},

	// Target megatron-bridge.
	{RuleEncoderNotDense, Error, "Encoders must be dense: ep 1 and expt_tp 1.", "Megatron-Bridge@067f987df03b src/megatron/bridge/models/megatron_mimo/megatron_mimo_config.py:163"},
	{RuleTPNotPowerOfTwo, Error, "tp must be a power of two.", "Megatron-Bridge@067f987df03b src/megatron/bridge/models/megatron_mimo/megatron_mimo_config.py:184"},
	{RuleGTPUnsupported, Error, "gtp_remat must be 1.", "Megatron-Bridge@067f987df03b src/megatron/bridge/models/megatron_mimo/megatron_mimo_config.py:11 (ModuleParallelismConfig has no GTP size)"},
	{RuleBridgeEncoderDPBelowLanguageDP, Error, "An encoder's dp is below the language dp (Megatron-Bridge from PR #2869 to before PR #4071).", "Megatron-Bridge@0bf1333ce040 src/megatron/bridge/models/mimo/mimo_config.py:144"},
	{RuleBridgeExpertNeedsNewerVersion, Error, "ep or expt_tp above 1 needs a Megatron-Bridge with PR #4485.", "Megatron-Bridge@4b68d3e5928e src/megatron/bridge/models/megatron_mimo/megatron_mimo_config.py:18, :28 (no expert_model_parallel_size; expt_tp counted in a module's ranks)"},

	// Node locality.
	{RuleGroupCrossesNode, Warning, "A tp, cp, tp_cp or expt_tp group spans more than one node.", "NVLink domain: these groups carry per-layer traffic"},

	// GPU probe.
	{RuleGPUCountShort, Error, "Fewer GPUs are visible than cluster.gpus_per_node.", "NVML"},
	{RuleGPUMixedModels, Error, "The visible GPUs are not all one model.", "NVML"},
	{RuleGPUMIGEnabled, Warning, "MIG mode is enabled on a visible GPU.", "NVML"},
	{RuleGPUVisibleDevices, Error, "A CUDA_VISIBLE_DEVICES entry does not resolve to a GPU.", "CUDA_VISIBLE_DEVICES semantics"},

	// Launch plan.
	{RuleHostCountMismatch, Error, "The number of hosts differs from cluster.nodes.", "torchrun static rendezvous"},
	{RuleLoopbackRendezvous, Error, "A loopback master address cannot serve a job of several nodes.", "torchrun static rendezvous"},
	{RuleDuplicateHost, Error, "A host appears twice in the host list.", "torchrun static rendezvous"},
	{RuleMasterNotFirstHost, Error, "With static rendezvous, --master-addr names a host other than node rank 0's.", "torchrun static rendezvous (node rank 0 serves the store)"},
	{RuleInvalidPort, Error, "The master port is not a decimal number in 1-65535.", "TCP"},
	{RuleMicroBatchRequired, Error, "A Megatron-LM plan without --micro-batch-size, or with one that fails the fan-out check.", "Megatron-LM@d98e8a64ddf3 megatron/training/arguments.py:693, examples/mimo/training/args.py:102"},
	{RuleTrainingArgumentConflict, Error, "A program argument sets a training setting to another value than the layout's training block (Megatron's default where the layout leaves it out).", "mimoplan launch-plan (the layout's training block is what validate, estimate and suggest read)"},
	{RuleEnvConflict, Error, "--env gives a variable of the layout's env block another value.", "mimoplan launch-plan (the layout's env block is what estimate reads)"},
}

// Rules returns the catalogue in documentation order.
func Rules() []Rule { return slices.Clone(catalogue) }

// Lookup returns the rule with the given id (a Diagnostic's Rule).
func Lookup(id string) (Rule, bool) {
	for _, r := range catalogue {
		if string(r.ID) == id {
			return r, true
		}
	}
	return Rule{}, false
}

// SeverityOf returns a rule's default severity; unknown ids are errors so
// that a typo can never silence a problem.
func SeverityOf(id RuleID) Severity {
	if r, ok := Lookup(string(id)); ok {
		return r.Severity
	}
	return Error
}
