package diag

import (
	"fmt"
	"slices"
	"strings"
)

// What a rule's verdict reads. A rule's verdict is whether it reports a
// module (for a rule that names none, whether it reports at all); each
// rule declares the inputs that verdict depends on, as names from this
// vocabulary:
//
//   - a module key (ModuleKeys): that key of the module the diagnostic
//     names; dp is the module's data-parallel size as built (given, or
//     num_ranks / (tp*gtp_remat*cp*pp));
//   - experts.<expt_tp or expt_gtp_remat>: that expert size, read only
//     when the module's model has experts (a model's memory and rules
//     ignore the expert sizes of a dense model);
//   - language.<module key>: that key of the language module;
//   - colocated.<module key>: that key of every module on the same span
//     as the module (itself alone when the placement is not colocated);
//   - modules.<module key>: that key of every module;
//   - placement: whether the modules share one span (colocated) or not;
//   - a layout key (LayoutKeys): target, target_version, world_size,
//     cluster, batch, training, env, names (the modules' names and order);
//   - Anything: the file, the command line or the machine.
//
// The rules after the core ones run on modules whose sizes are sound, and
// those that need the topology only when every module's grid builds
// (internal/validate/register.go): the declarations hold where the rule
// runs. A rule that leaves out a cause another rule reported declares
// that rule's inputs too. Over-declaring is safe (suggest then learns less
// from the rule); under-declaring is a bug that validate's
// TestRuleReadsItsDeclaredInputs looks for.

// Anything is the input of a rule whose verdict may read anything.
const Anything = "*"

// ModuleKeys are the module keys a declaration may name.
// split is the module's uneven pipeline split (decoder_first/last_pipeline_num_layers,
// account_for_embedding/loss_in_pipeline_split, pipeline_model_parallel_layout).
var ModuleKeys = []string{"name", "num_ranks", "rank_offset", "tp", "gtp_remat", "cp", "pp", "vpp", "dp", "ep", "expt_tp", "expt_gtp_remat", "num_experts", "model", "split"}

// LayoutKeys are the layout-level keys a declaration may name.
var LayoutKeys = []string{"target", "target_version", "world_size", "cluster", "batch", "training", "env", "names"}

// Input prefixes: another module's keys, and expert sizes read through
// an MoE model.
const (
	ExpertsPrefix   = "experts."
	LanguagePrefix  = "language."
	ColocatedPrefix = "colocated."
	ModulesPrefix   = "modules."
	Placement       = "placement"
)

// model rules read the module's model, its name (the language module's
// training options differ) and the training block.
const modelInputs = "model name training "

// reads declares each catalogue rule's inputs; TestEveryRuleDeclaresReads
// keeps it in step with the catalogue.
var reads = map[RuleID]string{
	RuleUnreadableFile:        Anything,
	RuleYAMLSyntax:            Anything,
	RuleUnknownField:          Anything,
	RuleInvalidValue:          Anything,
	RuleUnsupportedVersion:    Anything,
	RuleWorldSizeMismatch:     "world_size cluster",
	RuleDuplicateModule:       "names",
	RuleMissingLanguageModule: "names",
	// The given dp against the one num_ranks gives.
	RuleDPMismatch:          "num_ranks tp gtp_remat cp pp dp",
	RuleDenseNotDivisible:   "num_ranks tp gtp_remat cp pp",
	RuleExpertNotDivisible:  "num_ranks expt_tp ep expt_gtp_remat pp",
	RuleExpertsNotDivisible: "num_experts ep",
	RuleSpanOutOfWorld:      "num_ranks rank_offset world_size",
	RuleSpanOverlap:         "modules.num_ranks modules.rank_offset",
	RuleWorldGap:            "modules.num_ranks modules.rank_offset world_size",

	RuleBridgeLeadersNotDivisible: "dp gtp_remat language.dp language.gtp_remat target target_version placement names",
	RuleBridgeCPUnsupported:       "cp name target target_version placement names",
	RuleColocatedPPCPUnsupported:  "pp cp placement names colocated.tp colocated.gtp_remat colocated.cp colocated.dp colocated.pp colocated.ep colocated.expt_tp colocated.expt_gtp_remat",
	RuleDPNotCompatible:           "modules.dp modules.gtp_remat target target_version placement names",
	RuleFanInUnevenTokens:         "dp gtp_remat language.dp language.gtp_remat target_version placement names",

	RuleFanoutNotDivisible:             "dp language.dp language.gtp_remat batch target names",
	RuleGlobalBatchNotDivisible:        "language.dp language.gtp_remat batch target names",
	RuleMicroBatchNotDivisible:         "dp batch target",
	RuleGlobalBatchRequired:            "batch target",
	RuleGlobalBatchDefaultNotDivisible: "language.dp language.gtp_remat batch target names",
	// A module's pipeline sizes beside the language module's lanes, which
	// give the micro-batches of a step.
	RuleInterleavedMicrobatches: "pp vpp split language.dp language.gtp_remat batch target names",

	RuleHeadsNotDivisible:           modelInputs + "tp",
	RuleQueryGroupsNotDivisible:     modelInputs + "tp",
	RuleHiddenNotDivisible:          modelInputs,
	RuleFFNNotDivisible:             modelInputs + "tp experts.expt_tp",
	RuleLayersNotDivisible:          modelInputs + "pp vpp split",
	RuleLayersNotDivisibleVPP:       modelInputs + "pp vpp split",
	RuleVPPNeedsPP:                  modelInputs + "pp vpp split",
	RulePipelineSplitConflict:       modelInputs + "pp vpp split",
	RulePipelineSplitUneven:         modelInputs + "pp vpp split",
	RulePipelineLayoutInvalid:       modelInputs + "pp vpp split",
	RulePipelineSplitLayersMismatch: modelInputs + "pp vpp split",
	RuleSeqNotDivisibleCP:           modelInputs + "cp",
	RuleSeqNotDivisibleSP:           modelInputs + "tp cp",
	RuleSequenceParallelNeedsTP:     modelInputs + "tp",
	RuleTopKExceedsExperts:          modelInputs,
	RuleTopKOneNeedsPreSoftmax:      modelInputs,
	RuleEPNeedsExperts:              modelInputs + "ep",
	RuleMoELayerFreqLength:          modelInputs,
	RuleMLAWithGQA:                  modelInputs,
	RuleMoELatentNeedsExperts:       modelInputs,
	RuleMoETPNeedsSequenceParallel:  modelInputs + "tp",
	RuleRecomputeFullNeedsMethod:    modelInputs,
	RuleRecomputeSelectiveNoMethod:  modelInputs,
	RuleRecomputeSettingUnused:      modelInputs,
	RuleOverlapParamGatherNeeds:     modelInputs,
	RuleFP8ParamGatherNeeds:         modelInputs,
	RulePrecisionAwareNeeds:         "training",
	RuleOptimizerDtypeNeedsPA:       "training",
	RuleMainGradsNeedsBF16Reduce:    "training",
	RuleDeferWgradNeeds:             "training language.pp",
	RuleWgradDeferralNegative:       "training",
	RuleTECrossEntropyDisabled:      "training target target_version",
	RuleTECrossEntropyUnstable:      "training target target_version",
	RuleDeviceConnections:           "env training modules.tp",
	RuleTPCommOverlapNeedsSP:        modelInputs + "tp",
	RuleLocalAttentionNeedsLocal:    modelInputs,
	RuleFP8NeedsTE:                  modelInputs,
	RuleMoECommOverlapUnsupported:   modelInputs + "ep pp vpp split",
	RuleMoECapacityUnsupported:      "training",
	RuleRecomputeModuleUnsupported:  modelInputs,
	// The first pipeline stage's memory: the module's own sizes and
	// micro-batch (an encoder's follows the language module's lanes), and
	// colocated modules' together.
	RuleMoEBiasNeedsExptTP1:      modelInputs + "experts.expt_tp",
	RuleMLAOutputGateUnsupported: modelInputs,
	RuleGPUMemoryShort: modelInputs + "num_ranks tp gtp_remat cp pp vpp split dp ep experts.expt_tp experts.expt_gtp_remat num_experts " +
		"language.dp language.gtp_remat batch cluster target placement env " +
		"colocated.model colocated.name colocated.num_ranks colocated.tp colocated.gtp_remat colocated.cp colocated.pp colocated.vpp colocated.split colocated.dp " +
		"colocated.ep colocated.experts.expt_tp colocated.experts.expt_gtp_remat colocated.num_experts",

	RuleMIMOVPPUnsupported:            "pp vpp split name target target_version",
	RuleMIMOSplitUnsupported:          "pp vpp split name target target_version",
	RuleVPPNeedsPPWithoutP2POverlap:   "pp vpp split name target training",
	RuleColocatedUnsupported:          "placement target names",
	RuleTooManyEncoders:               "names target target_version",
	RuleEncoderNotFirst:               "modules.rank_offset target target_version placement names",
	RuleCPUnsupported:                 "cp name target target_version placement names",
	RuleEncoderParallelismUnsupported: "pp ep expt_tp gtp_remat expt_gtp_remat name target target_version placement names",
	RuleTargetVersionTooOld:           "target target_version",
	RuleMIMONeedsDistributedOptimizer: "target target_version training names",
	RuleGTPNeedsNewerVersion:          "gtp_remat expt_gtp_remat name target target_version",
	RuleLLMOnlyNotWholeWorld:          "num_ranks rank_offset world_size target target_version names",

	RuleEncoderNotDense:                "ep expt_tp name target target_version",
	RuleTPNotPowerOfTwo:                "tp target target_version",
	RuleGTPUnsupported:                 "gtp_remat expt_gtp_remat target target_version",
	RuleBridgeEncoderDPBelowLanguageDP: "dp language.dp name target target_version",
	RuleBridgeExpertNeedsNewerVersion:  "ep expt_tp target target_version",

	RuleGroupCrossesNode: "num_ranks rank_offset tp gtp_remat cp pp ep expt_tp expt_gtp_remat cluster",

	RuleGPUCountShort:            Anything,
	RuleGPUMixedModels:           Anything,
	RuleGPUMIGEnabled:            Anything,
	RuleGPUVisibleDevices:        Anything,
	RuleHostCountMismatch:        Anything,
	RuleLoopbackRendezvous:       Anything,
	RuleDuplicateHost:            Anything,
	RuleMasterNotFirstHost:       Anything,
	RuleInvalidPort:              Anything,
	RuleMicroBatchRequired:       Anything,
	RuleTrainingArgumentConflict: Anything,
	RuleEnvConflict:              Anything,
}

// bridgeReads are the rules whose inputs differ on target
// megatron-bridge: there micro_batch_size is global, and the global batch
// is checked against every module's dp.
var bridgeReads = map[RuleID]string{
	RuleGlobalBatchNotDivisible: "modules.dp batch target",
}

// Reads returns the inputs rule id's verdict reads on target (its
// layout name), in the vocabulary above; Anything for an unknown rule.
func Reads(id RuleID, target string) []string {
	s, ok := reads[id]
	if b, ok := bridgeReads[id]; ok && target == "megatron-bridge" {
		s = b
	}
	if !ok {
		return []string{Anything}
	}
	return strings.Fields(s)
}

// checkInput reports an input that is not in the vocabulary.
func checkInput(in string) error {
	if in == Anything || in == Placement || slices.Contains(LayoutKeys, in) {
		return nil
	}
	k := in
	for _, p := range []string{LanguagePrefix, ColocatedPrefix, ModulesPrefix} {
		if rest, ok := strings.CutPrefix(k, p); ok {
			k = rest
			break
		}
	}
	if rest, ok := strings.CutPrefix(k, ExpertsPrefix); ok {
		if rest == "expt_tp" || rest == "expt_gtp_remat" {
			return nil
		}
		return fmt.Errorf("%q: experts. names expt_tp or expt_gtp_remat", in)
	}
	if slices.Contains(ModuleKeys, k) {
		return nil
	}
	return fmt.Errorf("%q is not an input a rule can declare", in)
}
