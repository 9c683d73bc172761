package model

import "fmt"

// Rule ids of the model rules (diag's catalogue and docs/rules.md carry
// each with its Megatron-LM source).
const (
	RuleHeadsNotDivisible       = "heads-not-divisible"
	RuleQueryGroupsNotDivisible = "query-groups-not-divisible"
	RuleHiddenNotDivisible      = "hidden-not-divisible"
	RuleFFNNotDivisible         = "ffn-not-divisible"
	RuleLayersNotDivisible      = "layers-not-divisible"
	RuleLayersNotDivisibleVPP   = "layers-not-divisible-vpp"
	RuleVPPNeedsPP              = "vpp-needs-pp"
	RuleSeqNotDivisibleCP       = "seq-not-divisible-cp"
	RuleSeqNotDivisibleSP       = "seq-not-divisible-sp"
	RuleSequenceParallelNeedsTP = "sequence-parallel-needs-tp"
	RuleTopKExceedsExperts      = "topk-exceeds-experts"
	RuleTopKOneNeedsPreSoftmax  = "topk-one-needs-pre-softmax"
	RuleEPNeedsExperts          = "ep-needs-experts"
	RuleMoELayerFreqLength      = "moe-layer-freq-length"
	RuleMLAWithGQA              = "mla-with-gqa"
	RuleLatentNeedsExperts      = "moe-latent-needs-experts"
	RuleMoETPNeedsSP            = "moe-tp-needs-sequence-parallel"
)

// Violation is one start-up assert of Megatron-LM that the values break.
// Key is the layout key it is about ("model.num_attention_heads", "tp",
// "vpp", "training.sequence_parallel").
type Violation struct {
	Rule    string
	Key     string
	Message string
	Hint    string
}

// Check returns what Megatron-LM would refuse at start-up for this model
// on these sizes, in a fixed order. Defaults are resolved first, as
// Megatron resolves them. Sizes of 0 are treated as 1.
func Check(cfg Config, par Parallel, tr Training) []Violation {
	var out []Violation
	check(cfg, par, tr, func(rule, key string, hint any, format string, args ...any) {
		h, ok := hint.(string)
		if !ok {
			h = hint.(func() string)()
		}
		out = append(out, Violation{Rule: rule, Key: key, Hint: h, Message: fmt.Sprintf(format, args...)})
	})
	return out
}

// Rules returns the rules of Check's violations, in its order, without
// writing their messages: a caller that asks about many sizes (suggest)
// needs only the verdict.
func Rules(cfg Config, par Parallel, tr Training) []string {
	var out []string
	check(cfg, par, tr, func(rule, _ string, _ any, _ string, _ ...any) { out = append(out, rule) })
	return out
}

// check calls add for each violation; a hint is a string or, where it
// costs something to write, a func() string.
func check(cfg Config, par Parallel, tr Training, add func(rule, key string, hint any, format string, args ...any)) {
	c := cfg.Resolve()
	p := par
	for _, v := range []*int{&p.TP, &p.CP, &p.PP, &p.EP, &p.ExptTP} {
		if *v == 0 {
			*v = 1
		}
	}
	if c.NumAttentionHeads > 0 && c.NumAttentionHeads%p.TP != 0 {
		add(RuleHeadsNotDivisible, "model.num_attention_heads", func() string {
			return fmt.Sprintf("tp a divisor of %d (%s)", c.NumAttentionHeads, divisorsUpTo(c.NumAttentionHeads, p.TP))
		},
			"num_attention_heads (%d) is not a multiple of tp (%d)", c.NumAttentionHeads, p.TP)
	}
	if g := cfg.NumQueryGroups; g > 0 && !c.MultiLatentAttention && g%p.TP != 0 && p.TP%g != 0 {
		add(RuleQueryGroupsNotDivisible, "model.num_query_groups", "tp a multiple or divisor of num_query_groups",
			"num_query_groups (%d) is neither a multiple nor a divisor of tp (%d)", g, p.TP)
	}
	if cfg.KVChannels == 0 && c.NumAttentionHeads > 0 && c.HiddenSize%c.NumAttentionHeads != 0 {
		add(RuleHiddenNotDivisible, "model.hidden_size", "set kv_channels, or make hidden_size a multiple of num_attention_heads",
			"hidden_size (%d) is not a multiple of num_attention_heads (%d) and kv_channels is not given", c.HiddenSize, c.NumAttentionHeads)
	}
	if c.FFNHiddenSize%p.TP != 0 {
		add(RuleFFNNotDivisible, "model.ffn_hidden_size", "tp a divisor of ffn_hidden_size",
			"ffn_hidden_size (%d) is not a multiple of tp (%d)", c.FFNHiddenSize, p.TP)
	}
	if sh := c.MoESharedExpertIntermediateSize; c.NumExperts > 0 && sh > 0 && sh%p.TP != 0 {
		add(RuleFFNNotDivisible, "model.moe_shared_expert_intermediate_size", "tp a divisor of moe_shared_expert_intermediate_size",
			"moe_shared_expert_intermediate_size (%d) is not a multiple of tp (%d)", sh, p.TP)
	}
	if c.NumExperts > 0 && c.MoEFFNHiddenSize%p.ExptTP != 0 {
		add(RuleFFNNotDivisible, "model.moe_ffn_hidden_size", "expt_tp a divisor of moe_ffn_hidden_size",
			"moe_ffn_hidden_size (%d) is not a multiple of expt_tp (%d)", c.MoEFFNHiddenSize, p.ExptTP)
	}

	if errs, chunks := checkSplit(c.NumLayers, c.MTPNumLayers, p); len(errs) > 0 {
		for _, e := range errs {
			add(e.rule, e.key, e.hint, "%s", e.msg)
		}
	} else if n := sumChunks(chunks); n != c.NumLayers {
		add(RuleSplitLayersMismatch, splitKey(p.Split), "with pp 1, give decoder_first_pipeline_num_layers alone, equal to num_layers (or neither)",
			"the pipeline stages build %d layers, not num_layers (%d): with pp 1 Megatron builds decoder_last_pipeline_num_layers", n, c.NumLayers)
	}

	if p.CP > 1 && c.SeqLength%(2*p.CP) != 0 {
		add(RuleSeqNotDivisibleCP, "model.seq_length", func() string { return fmt.Sprintf("seq_length a multiple of %d", 2*p.CP) },
			"seq_length (%d) is not a multiple of 2*cp (%d)", c.SeqLength, 2*p.CP)
	}
	if tr.SequenceParallel && p.TP == 1 {
		add(RuleSequenceParallelNeedsTP, "training.sequence_parallel", "remove sequence_parallel, or use tp > 1 for this module",
			"sequence_parallel with tp 1: Megatron turns sequence parallelism off")
	}
	if tr.SequenceParallel && p.TP > 1 && (p.CP == 1 || c.SeqLength%(2*p.CP) == 0) && (c.SeqLength/p.CP)%p.TP != 0 {
		add(RuleSeqNotDivisibleSP, "model.seq_length", func() string { return fmt.Sprintf("seq_length/cp a multiple of tp (%d)", p.TP) },
			"with sequence_parallel, each rank's %d tokens (seq_length %d / cp %d) are not divisible by tp (%d)", c.SeqLength/p.CP, c.SeqLength, p.CP, p.TP)
	}

	if c.NumExperts > 0 && c.MoERouterTopK > c.NumExperts {
		add(RuleTopKExceedsExperts, "model.moe_router_topk", func() string { return fmt.Sprintf("moe_router_topk at most %d", c.NumExperts) },
			"moe_router_topk (%d) is more than num_experts (%d)", c.MoERouterTopK, c.NumExperts)
	}
	if c.NumExperts > 0 && c.MoERouterTopK == 1 && c.MoERouterScoreFunction != "sigmoid" && !c.MoERouterPreSoftmax {
		add(RuleTopKOneNeedsPreSoftmax, "model.moe_router_topk", "set moe_router_pre_softmax: true (or moe_router_score_function: sigmoid)",
			"moe_router_topk 1 with a softmax router needs moe_router_pre_softmax (softmax over one expert has no gradient)")
	}
	if c.NumExperts > 0 && p.TP > 1 && !tr.SequenceParallel {
		add(RuleMoETPNeedsSP, "tp", "set training.sequence_parallel: true, or tp 1 for this module",
			"MoE with tp %d and no sequence parallelism: MoELayer.forward refuses to train it (its first step fails)", p.TP)
	}
	if epNeedsExperts(c.NumExperts, p.EP) {
		add(RuleEPNeedsExperts, "ep", "set model.num_experts, or ep 1",
			"ep %d needs num_experts: the model has no experts", p.EP)
	}
	if c.NumExperts > 0 && len(c.MoELayerPattern) > 0 && len(c.MoELayerPattern) != c.NumLayers {
		add(RuleMoELayerFreqLength, "model.moe_layer_freq", func() string { return fmt.Sprintf("list one 0 or 1 for each of the %d layers", c.NumLayers) },
			"moe_layer_freq lists %d layers, num_layers is %d", len(c.MoELayerPattern), c.NumLayers)
	}
	if c.MultiLatentAttention && cfg.NumQueryGroups > 0 {
		add(RuleMLAWithGQA, "model.num_query_groups", "remove num_query_groups: multi-latent attention has no key/value groups",
			"multi_latent_attention and num_query_groups (group query attention) exclude one another")
	}
	if c.MoELatentSize > 0 && c.NumExperts == 0 {
		add(RuleLatentNeedsExperts, "model.moe_latent_size", "remove moe_latent_size, or give the model num_experts",
			"moe_latent_size (%d) without num_experts: latent projections are for MoE models", c.MoELatentSize)
	}
	checkTraining(c, p, tr, add)
	checkBuild(c, p, tr, add)
}

func epNeedsExperts(experts, ep int) bool { return ep > 1 && experts == 0 }

// EPNeedsExperts reports whether ep breaks ep-needs-experts for cfg: ep
// above 1 on a model without experts (validate.ExpertParallelOK).
func EPNeedsExperts(cfg Config, ep int) bool { return epNeedsExperts(cfg.Resolve().NumExperts, ep) }

// CheckInputs is p with the sizes Check does not read set to 0: a caller
// that asks Check about many sizes (suggest) asks once per distinct
// result. TestCheckInputs holds it to Check.
func CheckInputs(cfg Config, p Parallel) Parallel {
	p.NumRanks, p.GTPRemat, p.DP, p.ExptGTPRemat = 0, 0, 0, 0
	if cfg.Resolve().NumExperts == 0 {
		p.ExptTP = 0
	}
	return p
}

// divisorsUpTo lists n's divisors near x, for hints: the largest below x
// and the smallest above.
func divisorsUpTo(n, x int) string {
	lo, hi := 1, 0
	for d := 1; d <= n && d <= 1<<20; d++ {
		if n%d == 0 {
			if d < x {
				lo = d
			} else if d > x {
				hi = d
				break
			}
		}
	}
	if hi == 0 {
		return fmt.Sprintf("%d", lo)
	}
	return fmt.Sprintf("%d or %d", lo, hi)
}
