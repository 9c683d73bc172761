package diff_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diff"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func check(t *testing.T, src string) *validate.Result {
	t.Helper()
	l, d := layout.Parse("t.yaml", []byte(src))
	res := validate.Check(l, d)
	require.NotNil(t, res.Topology, "%s: %+v", src, res.Diags.Items)
	return res
}

const nemotron = `version: 1
cluster: {nodes: 1, gpus_per_node: 8}
batch: {micro_batch_size: 1, global_batch_size: 8}
modules:
  - {name: vision, num_ranks: 4, tp: 2}
  - {name: language, num_ranks: 4, tp: 2, ep: 4}
`

func TestIdentical(t *testing.T) {
	a := check(t, nemotron)
	r := diff.Compare("a", a, "b", check(t, nemotron))
	assert.True(t, r.Identical)
	for _, m := range r.Modules {
		assert.Equal(t, "same", m.Status)
		assert.Empty(t, m.Groups)
	}
	assert.Zero(t, r.Ranks.ModuleChanged+r.Ranks.NodeChanged+r.Ranks.StageChanged)
	assert.False(t, r.Batch.Changed())

	// The same groups from another spelling: dp given instead of num_ranks,
	// and a cluster of two nodes of 4 (the nodes change, not the groups).
	b := check(t, strings.Replace(strings.Replace(nemotron, "{name: vision, num_ranks: 4, tp: 2}", "{name: vision, dp: 2, tp: 2}", 1), "nodes: 1, gpus_per_node: 8", "nodes: 2, gpus_per_node: 4", 1))
	r = diff.Compare("a", a, "b", b)
	assert.True(t, r.Identical, "%+v", r.Modules)
	assert.Equal(t, 4, r.Ranks.NodeChanged, "ranks 4-7 go from node 0 to node 1")
	var out bytes.Buffer
	require.NoError(t, r.WriteText(&out, 80))
	assert.Contains(t, out.String(), "groups identical")
	assert.Contains(t, out.String(), "gpus_per_node 8 -> 4")
}

func TestTPChange(t *testing.T) {
	b := check(t, strings.Replace(nemotron, "{name: vision, num_ranks: 4, tp: 2}", "{name: vision, num_ranks: 4, tp: 4}", 1))
	r := diff.Compare("a", check(t, nemotron), "b", b)
	require.False(t, r.Identical)
	v := r.Modules[0]
	assert.Equal(t, "changed", v.Status)
	assert.Equal(t, []diff.Size{{Name: "tp", Pair: diff.Pair[int]{A: 2, B: 4}}, {Name: "dp", Pair: diff.Pair[int]{A: 2, B: 1}}}, v.Sizes)
	var kinds []string
	for _, g := range v.Groups {
		kinds = append(kinds, g.Kind)
		assert.Equal(t, 4, g.RanksMoved, g.Kind)
	}
	assert.Equal(t, []string{"tp", "dp", "dp_cp", "dp_cp_gtp_remat", "tp_cp", "mp"}, kinds)
	assert.Equal(t, "same", r.Modules[1].Status)
	// vision dp 2 -> 1: each encoder dp rank takes the whole step.
	assert.Contains(t, r.Batch.Removed, "vision micro-batch: 1 sample per dp rank (2 / dp 2)")
	assert.Contains(t, r.Batch.Added, "vision micro-batch: 2 samples per dp rank (2 / dp 1)")

	var out bytes.Buffer
	require.NoError(t, r.WriteText(&out, 80))
	text := out.String()
	assert.Regexp(t, `tp = tp_cp = mp +2 x 2 +1 x 4 +4\n`, text)
	assert.Regexp(t, `dp = dp_cp = dp_cp_gtp_remat +2 x 2 +4 x 1 +4\n`, text)
	assert.Contains(t, text, "groups differ: 6 group kinds change in 1 module")
	for _, line := range strings.Split(text, "\n") {
		assert.LessOrEqual(t, len(line), 80, line)
	}

	out.Reset()
	require.NoError(t, r.WriteJSON(&out))
	var j struct {
		Identical bool `json:"identical_groups"`
		Modules   []struct {
			Name   string `json:"name"`
			Groups []struct {
				Kind  string `json:"kind"`
				Moved int    `json:"ranks_moved"`
			} `json:"groups"`
		} `json:"modules"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &j))
	assert.False(t, j.Identical)
	assert.Len(t, j.Modules[0].Groups, 6, "JSON lists every kind, folded or not")
}

// A rank moves when its group of a kind is not the same set of ranks on
// both sides; the counts are checked against a brute force over random
// layout pairs, as are the ranks that change module, node and stage.
func TestAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	seen := map[bool]int{}
	for i := range 150 {
		sa, sb := randomLayout(rng), randomLayout(rng)
		if rng.IntN(4) == 0 {
			sb = sa
		}
		a, b := tryCheck(sa), tryCheck(sb)
		if a == nil || b == nil {
			continue
		}
		r := diff.Compare("a", a, "b", b)
		identical := true
		for _, m := range r.Modules {
			ma, mb := a.Topology.Module(m.Name), b.Topology.Module(m.Name)
			if ma == nil || mb == nil {
				identical = false
				continue
			}
			moved := map[string]int{}
			for _, g := range m.Groups {
				moved[g.Kind] = g.RanksMoved
			}
			for _, k := range grid.GroupKinds {
				ea, okA := ma.Group(k.Name)
				eb, okB := mb.Group(k.Name)
				if !okA && !okB {
					continue
				}
				want := bruteMoved(ea, okA, eb, okB, max(a.Topology.WorldSize, b.Topology.WorldSize))
				require.Equal(t, want, moved[k.Name], "case %d module %s kind %s\nA:\n%s\nB:\n%s", i, m.Name, k.Name, sa, sb)
				if want > 0 {
					identical = false
				}
			}
		}
		require.Equal(t, identical, r.Identical, "case %d", i)
		seen[identical]++
		mod, node, stage := bruteRanks(a.Topology, b.Topology)
		require.Equal(t, [3]int{mod, node, stage}, [3]int{r.Ranks.ModuleChanged, r.Ranks.NodeChanged, r.Ranks.StageChanged}, "case %d\nA:\n%s\nB:\n%s", i, sa, sb)
	}
	assert.Greater(t, seen[true], 20, "identical pairs")
	assert.Greater(t, seen[false], 50, "differing pairs")
}

func tryCheck(src string) *validate.Result {
	l, d := layout.Parse("t.yaml", []byte(src))
	res := validate.Check(l, d)
	if res.Topology == nil {
		return nil
	}
	return res
}

func randomLayout(rng *rand.Rand) string {
	pick := func(xs ...int) int { return xs[rng.IntN(len(xs))] }
	world := pick(8, 16)
	mod := func(name string, n, off int) string {
		tp, cp, pp := pick(1, 2, 4), pick(1, 2), pick(1, 2)
		for tp*cp*pp > n || n%(tp*cp*pp) != 0 {
			tp, cp, pp = pick(1, 2), 1, pick(1, 2)
		}
		ep := pick(1, 2, 4)
		for ep*pp > n || n%(ep*pp) != 0 {
			ep = 1
		}
		return fmt.Sprintf("  - {name: %s, num_ranks: %d, rank_offset: %d, tp: %d, cp: %d, pp: %d, ep: %d}\n", name, n, off, tp, cp, pp, ep)
	}
	s := fmt.Sprintf("version: 1\ntarget: core\nworld_size: %d\ncluster: {nodes: %d, gpus_per_node: %d}\nmodules:\n", world, world/4, 4)
	if rng.IntN(2) == 0 {
		s = fmt.Sprintf("version: 1\ntarget: core\nworld_size: %d\nmodules:\n", world)
	}
	switch rng.IntN(3) {
	case 0:
		return s + mod("language", world, 0)
	case 1:
		return s + mod("vision", world, 0) + mod("language", world, 0)
	}
	split := pick(world/2, world/4)
	return s + mod("vision", split, 0) + mod("language", world-split, split)
}

// groupWith is the sorted members of the group of e that holds r, or nil.
func groupWith(e grid.Enum, r int) []int {
	for _, g := range e.Groups() {
		if slices.Contains(g, r) {
			g = slices.Clone(g)
			slices.Sort(g)
			return g
		}
	}
	return nil
}

func bruteMoved(ea grid.Enum, okA bool, eb grid.Enum, okB bool, world int) int {
	n := 0
	for r := range world {
		var ga, gb []int
		if okA {
			ga = groupWith(ea, r)
		}
		if okB {
			gb = groupWith(eb, r)
		}
		if !slices.Equal(ga, gb) {
			n++
		}
	}
	return n
}

func bruteRanks(ta, tb *topo.Topology) (mod, node, stage int) {
	where := func(t *topo.Topology, r int) (mods []string, nd int, stages map[string][2]int) {
		stages = map[string][2]int{}
		nd = -1
		if t.Cluster != nil && r < t.WorldSize {
			nd = r / t.Cluster.GPUsPerNode
		}
		for _, m := range t.Modules {
			if !m.Grid.Contains(r) {
				continue
			}
			mods = append(mods, m.Name)
			pp, _ := m.Group("pp")
			_, member := pp.Locate(r)
			stages[m.Name] = [2]int{member, m.PP}
		}
		return mods, nd, stages
	}
	for r := range max(ta.WorldSize, tb.WorldSize) {
		ma, na, sa := where(ta, r)
		mb, nb, sb := where(tb, r)
		if !slices.Equal(ma, mb) {
			mod++
		}
		if na >= 0 && nb >= 0 && na != nb {
			node++
		}
		for name, x := range sa {
			if y, ok := sb[name]; ok && x != y {
				stage++
				break
			}
		}
	}
	return mod, node, stage
}
