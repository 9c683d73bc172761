package model

// Rule ids of the checks Megatron-LM makes while it builds the model (the
// layers' constructors and the configs they read), beyond its arguments.
const (
	RuleMoEBiasNeedsExptTP1 = "moe-bias-needs-expt-tp-1"
	RuleMLAOutputGate       = "mla-output-gate-unsupported"
)

// checkBuild adds the build-time checks that a layout's keys reach
// (docs/first-step-checks.md lists every check and its verdict).
func checkBuild(c Config, p Parallel, tr Training, add func(rule, key string, hint any, format string, args ...any)) {
	if c.NumExperts > 0 && *c.AddBiasLinear && p.ExptTP > 1 {
		add(RuleMoEBiasNeedsExptTP1, "expt_tp", "set model.add_bias_linear: false (most MoE models have no bias), or expt_tp 1",
			"MoE layers with biases (add_bias_linear, true by default) need expt_tp 1, not %d", p.ExptTP)
	}
	if tr.OverlapMoEExpertParallelComm && c.NumExperts > 0 && c.MTPNumLayers > 1 {
		add(RuleMoECommOverlapUnsupported, "training.overlap_moe_expert_parallel_comm", "use at most one MTP layer, or remove overlap_moe_expert_parallel_comm",
			"overlap_moe_expert_parallel_comm supports at most one MTP layer, not %d", c.MTPNumLayers)
	}
	if c.MultiLatentAttention && c.AttentionOutputGate {
		add(RuleMLAOutputGate, "model.attention_output_gate", "remove attention_output_gate, or multi_latent_attention",
			"multi_latent_attention has no attention output gate (MLATransformerConfig raises NotImplementedError)")
	}
}
