package model

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deferCase is one case of testdata/defer-wgrad-megatron.json, written by
// scripts/gen-defer-wgrad-fixtures.py: ModelParallelConfig(...) at d98e8a6
// with these fields.
type deferCase struct {
	PP      int    `json:"pipeline_model_parallel_size"`
	Fusion  bool   `json:"gradient_accumulation_fusion"`
	Defer   bool   `json:"defer_embedding_wgrad_compute"`
	Limit   int    `json:"wgrad_deferral_limit"`
	Outcome string `json:"outcome"`
	Line    int    `json:"line"`
}

func (c deferCase) name() string {
	f, d := "fusion", "defer"
	if !c.Fusion {
		f = "no-fusion"
	}
	if !c.Defer {
		d = "no-defer"
	}
	return fmt.Sprintf("pp%d-%s-%s-limit%d", c.PP, f, d, c.Limit)
}

// deferLine is the line of model_parallel_config.py whose ValueError a
// violation answers: the pipeline (:546), the fusion (:551), the limit
// (:556).
func deferLine(v Violation) int {
	switch {
	case v.Rule == RuleWgradDeferralNegative && v.Key == "training.wgrad_deferral_limit":
		return 556
	case v.Rule == RuleDeferWgradNeeds && v.Key == "training.defer_embedding_wgrad_compute":
		if strings.Contains(v.Message, "at pp 1") {
			return 546
		}
		return 551
	}
	return 0
}

// TestDeferWgradMatchesMegatron: mimoplan refuses exactly the cases
// ModelParallelConfig refuses; its first violation answers the ValueError
// upstream raised, and each further one (upstream stops at the first) the
// ValueError upstream raises once the earlier causes are repaired (pp 2,
// the fusion on).
func TestDeferWgradMatchesMegatron(t *testing.T) {
	cases := testutil.MegatronCases[deferCase](t, "testdata/defer-wgrad-megatron.json")
	require.Len(t, cases, 36)
	raised := map[int]int{}
	for name, c := range cases {
		require.Equal(t, name, c.name())
		tr := Training{NoGradientAccumulationFusion: !c.Fusion, DeferEmbeddingWgradCompute: c.Defer, WgradDeferralLimit: c.Limit}
		got := CheckDeferral(tr, c.PP)
		if c.Outcome == "ok" {
			assert.Empty(t, got, name)
			continue
		}
		require.Equal(t, "raises", c.Outcome, name)
		raised[c.Line]++
		require.NotEmpty(t, got, name)
		assert.Equal(t, c.Line, deferLine(got[0]), "%s: %+v", name, got[0])
		for _, v := range got[1:] {
			fixed := c
			fixed.PP = max(fixed.PP, 2)
			if deferLine(v) == 556 {
				fixed.Fusion = true
			}
			up, ok := cases[fixed.name()]
			require.True(t, ok, fixed.name())
			assert.Equal(t, "raises", up.Outcome, "%s: %s", name, fixed.name())
			assert.Equal(t, up.Line, deferLine(v), "%s: %+v against %s", name, v, fixed.name())
		}
	}
	// Each of the three ValueErrors is in the grid.
	assert.Equal(t, map[int]int{546: 6, 551: 6, 556: 2}, raised)
}
