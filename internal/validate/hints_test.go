package validate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// TestCascadesAndHints: a mistake is reported once, by its own rule, and
// its hint names a fix that works.
func TestCascadesAndHints(t *testing.T) {
	const head = "version: 1\nworld_size: 8\n"
	for _, tc := range []struct {
		name, src string
		rules     []string
		hint      string // in the first diagnostic's hint
	}{
		{"pp 3 on a dense model: no expert-grid echo",
			head + "modules:\n  - {name: language, num_ranks: 8, pp: 3, model: {preset: llama3-8b}}\n",
			[]string{"dense-not-divisible", "layers-not-divisible"}, "use pp 2 or 4 (dividing 8)"},
		{"ep too large stays its own error",
			head + "modules:\n  - {name: language, num_ranks: 8, tp: 3, pp: 2, ep: 8, num_experts: 16}\n",
			[]string{"dense-not-divisible", "expert-not-divisible"}, "use tp 2 or 4"},
		{"tp 3 on 8 ranks: divisors of 8",
			head + "modules:\n  - {name: language, num_ranks: 8, tp: 3}\n",
			[]string{"dense-not-divisible"}, "use tp 2 or 4 (dividing 8), or make num_ranks a multiple of 3 (e.g. 6 or 9)"},
		{"tp four: no sequence-parallel echo",
			head + "training: {sequence_parallel: true}\nmodules:\n  - {name: language, num_ranks: 8, tp: four, model: {preset: llama3-8b}}\n",
			[]string{"invalid-value"}, ""},
		{"target megatron_lm",
			"version: 1\ntarget: megatron_lm\nworld_size: 8\nmodules:\n  - {name: language, num_ranks: 8}\n",
			[]string{"invalid-value"}, `did you mean "megatron-lm"?`},
		{"recompute selectiv",
			head + "training: {recompute_granularity: selectiv}\nmodules:\n  - {name: language, num_ranks: 8}\n",
			[]string{"invalid-value"}, "did you mean selective?"},
		{"normalization rmsnorm",
			head + "modules:\n  - {name: language, num_ranks: 8, model: {preset: llama3-8b, normalization: rmsnorm}}\n",
			[]string{"invalid-value"}, `did you mean "RMSNorm"?`},
		{"misspelt split key",
			head + "modules:\n  - {name: language, num_ranks: 8, pp: 2, account_for_loss_in_pipeline_splt: true}\n",
			[]string{"unknown-field"}, `did you mean "account_for_loss_in_pipeline_split"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, d := layout.Parse("layout.yaml", []byte(tc.src))
			r := validate.Check(l, d)
			var rules []string
			for _, x := range r.Diags.Items {
				rules = append(rules, x.Rule)
			}
			assert.Equal(t, tc.rules, rules)
			if tc.hint != "" && assert.NotEmpty(t, r.Diags.Items) {
				assert.Contains(t, r.Diags.Items[0].Hint, tc.hint)
			}
		})
	}
}
