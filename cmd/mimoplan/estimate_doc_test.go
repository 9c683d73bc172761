package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/estimate"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// layoutsFixture is internal/model/testdata/layouts-megatron.json: what
// Megatron's report printed for each layout module's megatron_args
// (scripts/gen-model-fixtures.py --layouts).
type layoutsFixture struct {
	Commit string `json:"megatron_lm_commit"`
	Cases  []struct {
		Layout string `json:"layout"`
		Module string `json:"module"`
		Expect struct {
			Parameters              float64 `json:"parameters"`
			ActiveParameters        float64 `json:"active_parameters"`
			WeightAndOptimizerBytes float64 `json:"weight_and_optimizer_bytes"`
			ActivationBytes         float64 `json:"activation_bytes"`
			FLOPsPerSample          float64 `json:"flops_per_sample"`
			Report                  string  `json:"report"`
		} `json:"expect"`
	} `json:"cases"`
}

// TestLayoutsMatchMegatronReport: every module of layouts/ with a model
// still gets Megatron's own figures, and docs/estimate.md shows them.
func TestLayoutsMatchMegatronReport(t *testing.T) {
	root := testutil.RepoRoot()
	raw, err := os.ReadFile(filepath.Join(root, "internal", "model", "testdata", "layouts-megatron.json"))
	require.NoError(t, err)
	var fx layoutsFixture
	require.NoError(t, json.Unmarshal(raw, &fx))
	require.Len(t, fx.Commit, 40)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "estimate.md"))
	require.NoError(t, err)

	seen := map[string]bool{}
	for _, c := range fx.Cases {
		seen[c.Layout+":"+c.Module] = true
	}
	for _, f := range testutil.Layouts(t, "*.yaml") {
		rel := "layouts/" + filepath.Base(f)
		code, out, errOut := mimoplan(t, "estimate", "--format", "json", f)
		require.Contains(t, []int{0, 1}, code, errOut)
		var got estimate.Report
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		for _, m := range got.Modules {
			key := rel + ":" + m.Name
			require.True(t, seen[key], "%s is not in the fixture: run scripts/gen-model-fixtures.py --layouts layouts/*.yaml", key)
			for _, c := range fx.Cases {
				if c.Layout+":"+c.Module != key {
					continue
				}
				mg := m.Megatron
				for _, v := range []struct {
					name      string
					got, want float64
				}{
					{"parameters", mg.Parameters, c.Expect.Parameters},
					{"active_parameters", mg.ActiveParameters, c.Expect.ActiveParameters},
					{"weight_and_optimizer_bytes", mg.WeightAndOptimizerBytes, c.Expect.WeightAndOptimizerBytes},
					{"activation_bytes", mg.ActivationBytes, c.Expect.ActivationBytes},
					{"flops_per_sample", mg.FLOPsPerSample, c.Expect.FLOPsPerSample},
				} {
					assert.LessOrEqual(t, math.Abs(v.got-v.want), 1e-12*math.Abs(v.want), "%s %s: %v, Megatron %v", key, v.name, v.got, v.want)
				}
				row := fmt.Sprintf("| `%s` | %s | %s |", rel, m.Name, strings.TrimPrefix(c.Expect.Report, "Theoretical memory footprints: "))
				assert.Contains(t, string(doc), row, "docs/estimate.md is current")
				assert.Contains(t, string(doc), fmt.Sprintf("| %s |\n", thousands(float64(m.TotalBytes)/(1<<20))), "%s: mimoplan's total in docs/estimate.md", key)
			}
		}
	}
}

// thousands prints x rounded, with commas, as Python's "{:,.0f}" does.
func thousands(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
