package grid_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/grid"
)

func TestSizeFields(t *testing.T) {
	t.Parallel()
	m, err := grid.NewModule(grid.Spec{Name: "language", RankOffset: 8, NumRanks: 48, TP: 2, GTPRemat: 1, CP: 3, PP: 2, EP: 2, ExptTP: 3, ExptGTPRemat: 1}, 64)
	require.NoError(t, err)
	want := map[string]int{"num_ranks": 48, "rank_offset": 8, "tp": 2, "gtp_remat": 1, "cp": 3, "pp": 2, "dp": 4, "ep": 2, "expt_tp": 3, "expt_gtp_remat": 1, "expt_dp": 4}
	for _, f := range grid.SizeFields() {
		assert.Equal(t, want[f.Name], f.Of(m), f.Name)
		v, ok := m.Size(f.Name)
		assert.True(t, ok)
		assert.Equal(t, want[f.Name], v, f.Name)
		delete(want, f.Name)
	}
	assert.Empty(t, want)
	_, ok := m.Size("vpp")
	assert.False(t, ok)
	// The dims of both views are sizes too: --rank's positions read them.
	for _, d := range append(append([]string{}, grid.BaseDims...), grid.ExpertDims...) {
		_, ok := m.Size(d)
		assert.True(t, ok, d)
	}
	fs := grid.SizeFields()
	fs[0].Name = "changed"
	assert.Equal(t, "num_ranks", grid.SizeFields()[0].Name, "the slice is the caller's")
}
