package validate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// TestRecipesValidate: the published recipes (testdata/recipes: Llama 3.1
// 405B, DeepSeek-V3 and Qwen3-235B, whose layers split unevenly over their
// pipelines) are valid layouts, with an estimate for their model.
func TestRecipesValidate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testutil.RepoRoot(), "testdata", "recipes", "*.yaml"))
	require.NoError(t, err)
	require.Len(t, files, 3)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		l, d := layout.Parse(f, raw)
		r := validate.Check(l, d)
		assert.False(t, r.Diags.HasErrors(), "%s: %v", f, r.Diags.Items)
		assert.Len(t, r.Estimates, 1, f)
	}
}

// TestRecipeMemoryShortNamesBusiestStage: an uneven split's estimate is
// its busiest stage's, and gpu-memory-short says so.
func TestRecipeMemoryShortNamesBusiestStage(t *testing.T) {
	f := filepath.Join(testutil.RepoRoot(), "testdata", "recipes", "qwen3-235b-256gpu.yaml")
	raw, err := os.ReadFile(f)
	require.NoError(t, err)
	src := strings.Replace(string(raw), "cluster: {nodes: 32, gpus_per_node: 8}", "cluster: {nodes: 32, gpus_per_node: 8, gpu_memory: 16GiB}", 1)
	l, d := layout.Parse(f, []byte(src))
	r := validate.Check(l, d)
	require.Len(t, r.Diags.Items, 1)
	assert.Equal(t, "gpu-memory-short", r.Diags.Items[0].Rule)
	assert.Contains(t, r.Diags.Items[0].Message, "per GPU on its busiest pipeline stage")
}
