package validate_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// teCase is one case of testdata/te-cross-entropy-megatron.json, written
// by scripts/gen-te-cross-entropy-fixtures.py: ModelParallelConfig(...)
// with these fields at one point of its history.
type teCase struct {
	Point   string `json:"point"`
	Fusion  bool   `json:"cross_entropy_loss_fusion"`
	Impl    string `json:"cross_entropy_fusion_impl"`
	Outcome string `json:"outcome"`
}

// teCrossEntropyRules returns the loss fusion's diagnostics of a layout.
func teCrossEntropyRules(t *testing.T, target, version string, fusion bool, impl string) []diag.Diagnostic {
	t.Helper()
	text := fmt.Sprintf("version: 1\ntarget: %s\ntarget_version: %q\nworld_size: 8\n"+
		"training: {use_distributed_optimizer: true, cross_entropy_loss_fusion: %v, cross_entropy_fusion_impl: %s}\n"+
		"batch: {micro_batch_size: 1, global_batch_size: 8}\n"+
		"modules:\n  - {name: language, num_ranks: 8, tp: 2}\n", target, version, fusion, impl)
	l, d := layout.Parse("t.yaml", []byte(text))
	res := validate.Check(l, d)
	var out []diag.Diagnostic
	for _, it := range res.Diags.Items {
		if it.Rule == string(diag.RuleTECrossEntropyDisabled) || it.Rule == string(diag.RuleTECrossEntropyUnstable) {
			out = append(out, it)
		}
	}
	return out
}

// TestTECrossEntropyMatchesMegatron: on targets core and megatron-bridge
// (ModelParallelConfig without Megatron-LM's arguments) the disabled rule
// answers upstream's assertion and the unstable one its warning, at the
// target_version of each point of the fixture.
func TestTECrossEntropyMatchesMegatron(t *testing.T) {
	cases := testutil.MegatronCases[teCase](t, "testdata/te-cross-entropy-megatron.json")
	require.Len(t, cases, 12)
	versions := map[string]string{"before-5115": "2026-06-02", "5115": "5115", "5162": "5162"}
	want := map[string]string{"ok": "", "raises": string(diag.RuleTECrossEntropyDisabled), "warns": string(diag.RuleTECrossEntropyUnstable)}
	seen := map[string]int{}
	for name, c := range cases {
		seen[c.Outcome]++
		for _, target := range []string{"core", "megatron-bridge"} {
			got := teCrossEntropyRules(t, target, versions[c.Point], c.Fusion, c.Impl)
			if want[c.Outcome] == "" {
				assert.Empty(t, got, "%s on %s", name, target)
				continue
			}
			require.Len(t, got, 1, "%s on %s", name, target)
			assert.Equal(t, want[c.Outcome], got[0].Rule, "%s on %s", name, target)
			// Reported at cross_entropy_fusion_impl's value.
			assert.Equal(t, 5, got[0].Line, name)
		}
	}
	assert.Equal(t, map[string]int{"ok": 10, "raises": 1, "warns": 1}, seen)
}

// Megatron-LM's validate_args refuses the te fusion from PR #5115 on,
// whatever ModelParallelConfig does: every target_version it launches.
func TestTECrossEntropyMegatronLM(t *testing.T) {
	for _, c := range []struct {
		version, impl string
		fusion        bool
		want          string
	}{
		{"5375", "te", true, string(diag.RuleTECrossEntropyDisabled)},
		{"5162", "te", true, string(diag.RuleTECrossEntropyDisabled)},
		{"", "te", true, string(diag.RuleTECrossEntropyDisabled)},
		{"", "native", true, ""},
		{"", "te", false, ""},
	} {
		got := teCrossEntropyRules(t, "megatron-lm", c.version, c.fusion, c.impl)
		if c.want == "" {
			assert.Empty(t, got, "%+v", c)
			continue
		}
		require.Len(t, got, 1, "%+v", c)
		assert.Equal(t, c.want, got[0].Rule, "%+v", c)
		assert.Equal(t, diag.Error, got[0].Severity)
	}
}
