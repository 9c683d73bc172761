package layout_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// The layout's size keys and a built module's are one list: the same
// names in the same order, and expt_dp, the one the grid derives.
func TestSizeFieldsMatchTheGrid(t *testing.T) {
	t.Parallel()
	var names []string
	for _, f := range layout.SizeFields() {
		names = append(names, f.Name)
	}
	var built []string
	for _, f := range grid.SizeFields() {
		built = append(built, f.Name)
	}
	assert.Equal(t, append(names, "expt_dp"), built)
}

// Each accessor reads the key it names, as the parser sets it.
func TestSizeFieldsReadTheirKeys(t *testing.T) {
	t.Parallel()
	src := "version: 1\nworld_size: 4096\nmodules:\n- {name: language, num_ranks: 2048, rank_offset: 7, tp: 2, gtp_remat: 3, cp: 5, pp: 11, dp: 13, ep: 17, expt_tp: 19, expt_gtp_remat: 23}\n"
	l, d := layout.Parse("t.yaml", []byte(src))
	require.NotNil(t, l)
	require.Len(t, l.Modules, 1, "%v", d.Items)
	want := map[string]int{"num_ranks": 2048, "rank_offset": 7, "tp": 2, "gtp_remat": 3, "cp": 5, "pp": 11, "dp": 13, "ep": 17, "expt_tp": 19, "expt_gtp_remat": 23}
	parallel := map[string]bool{"tp": true, "gtp_remat": true, "cp": true, "pp": true, "ep": true, "expt_tp": true, "expt_gtp_remat": true}
	m := &l.Modules[0]
	for _, f := range layout.SizeFields() {
		assert.Equal(t, want[f.Name], f.Of(m), f.Name)
		assert.Equal(t, parallel[f.Name], f.Parallel, f.Name)
		delete(want, f.Name)
	}
	assert.Empty(t, want)
}
