package validate_test

import (
	"os"
	"path/filepath"
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
