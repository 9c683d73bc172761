package diff

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// stageOf, compareRanks' allocation-free stage, is the pp coordinate of
// the grid's base view for every rank of every module of the example and
// golden layouts.
func TestStageOfIsCoords(t *testing.T) {
	files := append(testutil.Layouts(t, "*.yaml"), testutil.GoldenLayouts(t, "*.yaml")...)
	checked := 0
	for _, f := range files {
		res, err := validate.Load(f)
		if err != nil || res.Topology == nil {
			continue
		}
		for _, m := range res.Topology.Modules {
			for r := m.RankOffset; r < m.RankOffset+min(m.NumRanks, 1<<14); r++ {
				_, v, err := m.Grid.Coords(r, grid.BaseView)
				require.NoError(t, err)
				require.Equal(t, v[len(v)-1], stageOf(m, r), "%s: %s rank %d", f, m.Name, r)
				checked++
			}
		}
	}
	require.Greater(t, checked, 1000)
}

// diff of two 1,048,576-rank layouts allocates a bounded amount: no
// per-rank maps or strings (5 GB at 4,194,304 ranks before), no per-group
// hashes (221 MB at 16,777,216).
func TestCompareBounded(t *testing.T) {
	load := func(sizes string) *validate.Result {
		l, d := layout.Parse("x.yaml", []byte("version: 1\nworld_size: 1048576\nmodules:\n  - {name: language, num_ranks: 1048576, "+sizes+"}\n"))
		return validate.Check(l, d)
	}
	a, b := load("tp: 8, pp: 4"), load("tp: 4, pp: 8")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := Compare("a", a, "b", b)
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20))
	require.Equal(t, 1048576, r.Ranks.StageChanged)
}
