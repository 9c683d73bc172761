package validate

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
)

// A grid cache changes nothing but the time: every layout gets the same
// diagnostics and topology with a cache shared across all of them, twice.
func TestCheckWithGridsSameResult(t *testing.T) {
	files, err := filepath.Glob("../../layouts/*.yaml")
	require.NoError(t, err)
	more, _ := filepath.Glob("../../testdata/demo/*.yaml")
	files = append(files, more...)
	require.NotEmpty(t, files)
	g := NewGrids()
	for round := 0; round < 2; round++ {
		for _, f := range files {
			l, d, err := layout.Load(f)
			require.NoError(t, err)
			l2, d2, _ := layout.Load(f)
			want := Check(l, d)
			got := CheckWith(l2, d2, g)
			assert.Equal(t, want.Diags.Items, got.Diags.Items, f)
			assert.Equal(t, want.Diags.Notes, got.Diags.Notes, f)
			assert.Equal(t, want.Topology == nil, got.Topology == nil, f)
			if want.Topology != nil {
				assert.Equal(t, want.Topology.Modules, got.Topology.Modules, f)
			}
		}
	}
	assert.NotEmpty(t, g.m, "the cache was used")
}
