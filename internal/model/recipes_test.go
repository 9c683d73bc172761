package model_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// TestRecipesSplit: the published recipes of testdata/recipes (Llama 3.1
// 405B, DeepSeek-V3, Qwen3-235B, each citing its Megatron-Bridge line)
// split their layers unevenly as upstream does: the stages below are
// get_num_layers_to_build's, summed over virtual stages.
func TestRecipesSplit(t *testing.T) {
	for _, tc := range []struct {
		file   string
		pp     int // 0: the recipe's
		stages []int
	}{
		// 126 + embedding + loss over 8 x 2 chunks of 8.
		{"llama3.1-405b-256gpu.yaml", 0, []int{15, 16, 16, 16, 16, 16, 16, 15}},
		// The layout string: E + 4, 14 x 4, 1 + MTP + loss.
		{"deepseek-v3-1024gpu.yaml", 0, []int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1}},
		// 94 + embedding + loss over 16 stages of 6.
		{"qwen3-235b-256gpu.yaml", 0, []int{5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5}},
		// The Qwen3-235B at pp 8: 96 over 8 stages of 12.
		{"qwen3-235b-256gpu.yaml", 8, []int{11, 12, 12, 12, 12, 12, 12, 11}},
	} {
		t.Run(fmt.Sprintf("%s/pp%d", tc.file, tc.pp), func(t *testing.T) {
			path := filepath.Join(testutil.RepoRoot(), "testdata", "recipes", tc.file)
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			l, d := layout.Parse(path, raw)
			require.Empty(t, d.Items)
			m := l.Modules[0]
			if tc.pp > 0 {
				m.PP = tc.pp
			}
			require.True(t, m.Split.Uneven())
			p := model.Parallel{TP: m.TP, CP: m.CP, PP: m.PP, VPP: m.VPP, EP: m.EP, Split: m.Split}
			assert.Empty(t, model.Check(m.Model.Config, p, model.Training{SequenceParallel: true}))
			assert.Equal(t, tc.stages, model.StageLayers(m.Model.Config, p))
		})
	}
}
