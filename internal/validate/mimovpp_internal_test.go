package validate

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// mimoVPPCase is one case of testdata/mimo-vpp-megatron.json.
type mimoVPPCase struct {
	Outcome string         `json:"outcome"`
	Where   string         `json:"where"`
	Stubbed []string       `json:"stubbed"`
	Python  string         `json:"python"`
	Result  map[string]any `json:"result"`
}

// TestMIMOVPPMatchesMegatron: scripts/gen-mimo-vpp-fixtures.py ran
// Megatron-LM's MIMO example's argument validation (pretrain_mimo.py's
// _parse_and_validate, a 2-rank --llm-only launch at --llm-pp 2 with the
// language model's --hybrid-layer-pattern) on the virtual pipeline
// arguments launch-plan writes, and the core code the MIMO builders reach.
// mimo-vpp-unsupported refuses exactly the layouts whose arguments
// upstream refuses, and cites the lines that refuse them.
func TestMIMOVPPMatchesMegatron(t *testing.T) {
	cases := testutil.MegatronCases[mimoVPPCase](t, "testdata/mimo-vpp-megatron.json")
	// The split cases ran on CPU (--only): what they stub is no upstream
	// code and nothing their argument checks compute with.
	for name, c := range cases {
		if c.Python == "" {
			require.Empty(t, c.Stubbed, "%s ran with stubs", name)
		}
		require.Subset(t, []string{"torch", "numpy", "packaging", "triton", "typing_extensions"}, c.Stubbed, name)
	}
	citedBy := func(id diag.RuleID, where string) bool {
		rule, ok := diag.Lookup(string(id))
		require.True(t, ok)
		file, line, _ := strings.Cut(where, ":")
		i := strings.Index(rule.Source, file)
		return i >= 0 && strings.Contains(rule.Source[i:], ":"+line)
	}
	cited := func(where string) bool { return citedBy(diag.RuleMIMOVPPUnsupported, where) }

	// The language module of the fixture's launch, with each virtual
	// pipeline setting launch-plan writes as the case's argument.
	const model = "  model: {num_layers: 8, hidden_size: 64, num_attention_heads: 4, seq_length: 64, vocab_size: 128}\n"
	layouts := map[string]string{
		"lm-no-vpp":   "",
		"lm-vpp-flag": "  vpp: 2\n",
		"lm-layout":   "  pipeline_model_parallel_layout: \"Et*2|t*2|t*2|t*2L\"\n",
		// mimo-split-unsupported's.
		"lm-layout-pp-stages":  "  pipeline_model_parallel_layout: \"Etttt|ttttL\"\n",
		"lm-account-embedding": "  account_for_embedding_in_pipeline_split: true\n",
		"lm-account-loss":      "  account_for_loss_in_pipeline_split: true\n",
		"lm-first-last":        "  decoder_first_pipeline_num_layers: 3\n  decoder_last_pipeline_num_layers: 5\n",
	}
	for name, split := range layouts {
		c, ok := cases[name]
		require.True(t, ok, name)
		src := "version: 1\ntarget: megatron-lm\nworld_size: 2\nbatch: {micro_batch_size: 1, global_batch_size: 8}\n" +
			"training: {use_distributed_optimizer: true}\nmodules:\n- name: language\n  num_ranks: 2\n  pp: 2\n" + split + model
		l, d := layout.Parse("lm.yaml", []byte(src))
		r := Check(l, d)
		var got []string
		for _, it := range r.Diags.Items {
			got = append(got, it.Rule)
		}
		var by []diag.RuleID
		for _, id := range []diag.RuleID{diag.RuleMIMOVPPUnsupported, diag.RuleMIMOSplitUnsupported} {
			if slices.Contains(got, string(id)) {
				by = append(by, id)
			}
		}
		require.Equal(t, c.Outcome == "raises", len(by) > 0, "%s: upstream %s at %s; mimoplan %v", name, c.Outcome, c.Where, got)
		if len(by) > 0 {
			require.Len(t, by, 1, "%s: one rule refuses it", name)
			require.True(t, citedBy(by[0], c.Where), "%s: %s's source cites %s", name, by[0], c.Where)
		}
	}

	// The core code behind the rule: a virtual pipeline built without a
	// vp_stage asserts, and MIMO's process groups get the non-interleaved
	// schedule.
	core := cases["core-vpp"]
	require.Equal(t, "raises", core.Outcome)
	require.True(t, cited(core.Where), "the rule's source cites %s", core.Where)
	require.Equal(t, "ok", cases["core-no-vpp"].Outcome)
	s := cases["schedule"].Result
	require.Equal(t, "forward_backward_pipelining_with_interleaving", s["single_module"])
	require.Equal(t, "forward_backward_pipelining_without_interleaving", s["multi_module"])
	require.True(t, cited("megatron/core/pipeline_parallel/schedules.py:154"))
}
