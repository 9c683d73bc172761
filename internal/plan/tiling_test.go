package plan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// TestTilesInEqualsFiltered: the walk over the sizes of a band's sets
// (tilesIn, which steps over the last module's sizes where they are
// fewer) visits exactly the tilings of the plain walk whose every size is
// in its module's set, in the same order, under the spec's placement
// constraints.
func TestTilesInEqualsFiltered(t *testing.T) {
	specs := []struct{ name, spec string }{
		{"three modules, 24 ranks", "version: 1\nworld_size: 24\nmodules:\n  - {name: vision}\n  - {name: audio}\n  - {name: language}\n"},
		{"two modules, 30 ranks", "version: 1\nworld_size: 30\nmodules:\n  - {name: vision}\n  - {name: language}\n"},
		{"four modules, 16 ranks", "version: 1\nworld_size: 16\nmodules:\n  - {name: a}\n  - {name: b}\n  - {name: c}\n  - {name: language}\n"},
		{"align node, num_ranks, rank_offset", "version: 1\ncluster: {nodes: 6, gpus_per_node: 4}\nmodules:\n" +
			"  - {name: vision, align: node}\n  - {name: audio, num_ranks: 6}\n  - {name: language}\n"},
		{"rank_offset", "version: 1\nworld_size: 20\nmodules:\n  - {name: vision, rank_offset: 0}\n  - {name: language}\n"},
	}
	rng := rand.New(rand.NewPCG(24, 1))
	for _, tc := range specs {
		t.Run(tc.name, func(t *testing.T) {
			spec, d := layout.ParseSpec("s.yaml", []byte(tc.spec))
			require.False(t, d.HasErrors(), "%v", d.Items)
			s, err := newSearcher(&Request{Spec: spec, Est: toyEstimator{}, HW: steptime.GPUs["H100"]})
			require.NoError(t, err)
			w, k := spec.WorldSize, len(spec.Modules)
			tilings := 0
			for trial := range 40 {
				sets := make([]sizeSet, k)
				fewest := make([]int, k)
				for i := range sets {
					sets[i].in = make([]bool, w+1)
					dense := rng.Float64()
					for size := 1; size <= w; size++ {
						if rng.Float64() < dense {
							sets[i].list = append(sets[i].list, size)
							sets[i].in[size] = true
						}
					}
					fewest[i] = w + 1
					if len(sets[i].list) > 0 {
						fewest[i] = sets[i].list[0]
					}
				}
				idx := make([]int, k)
				for i := range idx {
					idx[i] = i
				}
				off, n := make([]int, k), make([]int, k)
				walk := func(perm []int, withSets bool) []string {
					var got []string
					t := &tiling{perm: perm, off: off, n: n, least: func(i int) int { return fewest[i] },
						enter: func(_, i, _, size int) bool { return sets[i].has(size) },
						leaf:  func() { got = append(got, fmt.Sprint(off, n)) }}
					if withSets {
						t.sets = sets
					}
					s.tiles(t, 0, 0)
					return got
				}
				permute(idx, 0, func(perm []int) {
					want, got := walk(perm, false), walk(perm, true)
					require.Equal(t, want, got, "trial %d, order %v", trial, perm)
					tilings += len(want)
				})
			}
			require.Positive(t, tilings, "no tiling in any trial: the comparison says nothing")
		})
	}
}

// TestSizeSetWithin: within is the set's part in [lo, hi], empty when the
// range is.
func TestSizeSetWithin(t *testing.T) {
	z := sizeSet{list: []int{2, 3, 5, 8, 13}}
	for _, c := range []struct {
		lo, hi int
		want   []int
	}{{1, 20, []int{2, 3, 5, 8, 13}}, {3, 8, []int{3, 5, 8}}, {4, 4, nil}, {9, 2, nil}, {13, 13, []int{13}}, {14, 30, nil}} {
		require.Equal(t, len(c.want), len(z.within(c.lo, c.hi)), "[%d, %d]", c.lo, c.hi)
		if len(c.want) > 0 {
			require.True(t, slices.Equal(c.want, z.within(c.lo, c.hi)), "[%d, %d]", c.lo, c.hi)
		}
	}
}
