package grid_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/grid"
)

// bruteEnum is the enumeration written from its definition rather than
// from HyperCommGrid's reshape and moveaxis: walk every rank, read its
// coordinates (first dim fastest), and file it under the group named by
// the coordinates of the dims not asked for, at the member index named by
// those asked for, both read as numbers whose earliest dim is the fastest
// digit.
func bruteEnum(offset int, shape []int, names []string, dims []string) [][]int {
	asked := map[string]bool{}
	for _, d := range dims {
		asked[d] = true
	}
	total, groupSize := 1, 1
	for i, s := range shape {
		total *= s
		if asked[names[i]] {
			groupSize *= s
		}
	}
	groups := make([][]int, total/groupSize)
	for i := range groups {
		groups[i] = make([]int, groupSize)
	}
	for local := range total {
		rest := local
		group, gw, member, mw := 0, 1, 0, 1
		for i, s := range shape {
			c := rest % s
			rest /= s
			if asked[names[i]] {
				member += c * mw
				mw *= s
			} else {
				group += c * gw
				gw *= s
			}
		}
		groups[group][member] = offset + local
	}
	return groups
}

func randomShape(r *rand.Rand, names []string, maxRanks int) []int {
	for {
		shape := make([]int, len(names))
		total := 1
		for i := range shape {
			shape[i] = 1 + r.IntN(5)
			if r.IntN(3) == 0 {
				shape[i] = 1
			}
			total *= shape[i]
		}
		if total <= maxRanks {
			return shape
		}
	}
}

func randomDims(r *rand.Rand, names []string) []string {
	var dims []string
	for len(dims) == 0 {
		for _, i := range r.Perm(len(names)) { // order must not matter
			if r.IntN(2) == 0 {
				dims = append(dims, names[i])
			}
		}
	}
	return dims
}

// TestEnumMatchesDefinition checks random grids and dim sets against
// bruteEnum, and Locate and Coords against the enumeration.
func TestEnumMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "c", "d", "e", "f"}
	for range 3000 {
		n := 1 + r.IntN(len(names))
		shape := randomShape(r, names[:n], 720)
		total := 1
		for _, s := range shape {
			total *= s
		}
		offset := r.IntN(50)
		g, err := grid.New(shape, names[:n], offset, offset+total+r.IntN(3))
		require.NoError(t, err)
		dims := randomDims(r, names[:n])
		e, err := g.RankEnum(dims, "")
		require.NoError(t, err)
		want := bruteEnum(offset, shape, names[:n], dims)
		require.Equal(t, want, e.Groups(), "shape %v dims %v", shape, dims)
		require.Equal(t, len(want), e.NumGroups())
		require.Equal(t, len(want[0]), e.GroupSize())
		for i, grp := range want {
			for m, rank := range grp {
				gi, mi := e.Locate(rank)
				require.Equal(t, [2]int{i, m}, [2]int{gi, mi}, "rank %d, shape %v dims %v", rank, shape, dims)
				require.Equal(t, rank, e.Rank(i, m))
			}
		}
		for i, grp := range want {
			require.Equal(t, grp, fromRuns(e, i), "runs of group %d, shape %v dims %v", i, shape, dims)
			if start, stride, n, ok := e.Run(i); ok {
				run := make([]int, n)
				for k := range run {
					run[k] = start + k*stride
				}
				require.Equal(t, grp, run, "run of group %d, shape %v dims %v", i, shape, dims)
			}
		}
		assert.Equal(t, -1, e.GroupOf(offset-1))
		assert.Equal(t, -1, e.GroupOf(offset+total))
	}
}

// fromRuns lists group i of e from its runs.
func fromRuns(e grid.Enum, i int) []int {
	var out []int
	e.Runs(i, func(start, stride, n int) {
		if n < 1 {
			panic("empty run")
		}
		for k := range n {
			out = append(out, start+k*stride)
		}
	})
	return out
}

// The embedding groups keep the first and last member of each pp group;
// the position-embedding groups the first; pp 1 leaves one member.
func TestEnds(t *testing.T) {
	for _, pp := range []int{1, 2, 3, 7} {
		g, err := grid.New([]int{2, 3, pp}, []string{"tp", "dp", "pp"}, 5, 5+6*pp)
		require.NoError(t, err)
		e, err := g.RankEnum([]string{"pp"}, "")
		require.NoError(t, err)
		var embd, pos [][]int
		for _, grp := range e.Groups() {
			if len(grp) == 1 {
				embd = append(embd, []int{grp[0]})
			} else {
				embd = append(embd, []int{grp[0], grp[len(grp)-1]})
			}
			pos = append(pos, []int{grp[0]})
		}
		for i := range embd {
			assert.Equal(t, embd[i], fromRuns(e.Ends(true), i), "pp %d", pp)
			assert.Equal(t, pos[i], fromRuns(e.Ends(false), i), "pp %d", pp)
		}
		assert.Equal(t, embd, e.Ends(true).Groups(), "pp %d", pp)
		assert.Equal(t, pos, e.Ends(false).Groups(), "pp %d", pp)
		assert.Equal(t, pos, e.Ends(true).Ends(false).Groups(), "pp %d", pp)
		for i, grp := range embd {
			for m, rank := range grp {
				gi, mi := e.Ends(true).Locate(rank)
				assert.Equal(t, [2]int{i, m}, [2]int{gi, mi})
			}
		}
		if pp > 2 {
			// A middle stage is in no embedding group.
			assert.Equal(t, -1, e.Ends(true).GroupOf(e.Rank(0, 1)))
		}
	}
}

func TestRegisterViewChecks(t *testing.T) {
	g, err := grid.New([]int{2, 3, 4}, []string{"tp", "dp", "pp"}, 0, 24)
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		shape  []int
		names  []string
		shared []string
	}{
		"size differs":         {[]int{2, 2, 4}, []string{"x", "y", "pp"}, []string{"pp"}},
		"duplicate dims":       {[]int{2, 3, 4}, []string{"x", "x", "pp"}, []string{"pp"}},
		"zero size":            {[]int{0, 6, 4}, []string{"x", "y", "pp"}, nil},
		"shared not in base":   {[]int{6, 4}, []string{"x", "y"}, []string{"y"}},
		"shared not in view":   {[]int{6, 4}, []string{"x", "y"}, []string{"pp"}},
		"shared twice":         {[]int{6, 4}, []string{"x", "pp"}, []string{"pp", "pp"}},
		"different membership": {[]int{4, 6}, []string{"pp", "x"}, []string{"pp"}},
	} {
		assert.Error(t, g.RegisterView("v_"+name, tc.shape, tc.names, tc.shared), name)
	}
	require.NoError(t, g.RegisterView("expert", []int{3, 2, 4}, []string{"ep", "edp", "pp"}, []string{"pp"}))
	assert.Error(t, g.RegisterView("expert", []int{3, 2, 4}, []string{"ep", "edp", "pp"}, []string{"pp"}), "registered twice")
}

// A module's size must not cost memory: every group of a 2^24-rank module
// is computed, never stored.
func TestModuleMemoryIndependentOfRanks(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := grid.NewModule(grid.Spec{Name: grid.LanguageModule, NumRanks: 1 << 24, TP: 8, GTPRemat: 1, CP: 2, PP: 16, EP: 64, ExptTP: 1, ExptGTPRemat: 1}, 1<<24)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<10), "bytes allocated to build the module")
	last := 1<<24 - 1
	e, _ := m.Group("intra_dist_opt")
	assert.Equal(t, [2]int{1, 1 << 24}, [2]int{e.NumGroups(), e.GroupSize()})
	assert.Equal(t, last, e.Rank(0, last))
	e, _ = m.Group("embd")
	assert.Equal(t, [2]int{1 << 20, 2}, [2]int{e.NumGroups(), e.GroupSize()})
	assert.Equal(t, []int{last - 15<<20, last}, e.AppendGroup(nil, 1<<20-1))
}
