package validate_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// FuzzValidLayout: whenever a layout is valid, its topology holds what
// Megatron needs of it. Every rank of the world is covered exactly once
// (non-colocated) or by every module (colocated); every group kind but
// embd and pos_embd partitions its module's ranks, in groups of the size
// its dims multiply to; embd and pos_embd are the language module's
// alone, inside its ranks, each group within one of its pp groups.
func FuzzValidLayout(f *testing.F) {
	for _, seed := range testutil.LayoutSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		src := testutil.LayoutFromBytes(b)
		l, d := layout.Parse("fuzz.yaml", []byte(src))
		r := validate.Check(l, d)
		if !r.Valid(false) {
			return
		}
		checkTopology(t, r.Topology, src)
	})
}

func checkTopology(t *testing.T, tp *topo.Topology, src string) {
	t.Helper()
	world := tp.WorldSize
	cover := make([]int, world)
	for _, m := range tp.Modules {
		if m.RankOffset < 0 || m.RankOffset+m.NumRanks > world {
			t.Fatalf("module %s spans [%d, %d) outside the world %d:\n%s", m.Name, m.RankOffset, m.RankOffset+m.NumRanks, world, src)
		}
		for r := m.RankOffset; r < m.RankOffset+m.NumRanks; r++ {
			cover[r]++
		}
	}
	want := 1
	if tp.Mode == topo.Colocated {
		want = len(tp.Modules)
	}
	for r, c := range cover {
		if c != want {
			t.Fatalf("%s: rank %d is covered by %d modules, want %d:\n%s", tp.Mode, r, c, want, src)
		}
	}
	for _, m := range tp.Modules {
		lo, hi := m.RankOffset, m.RankOffset+m.NumRanks
		sizes := map[string]int{"tp": m.TP, "gtp_remat": m.GTPRemat, "cp": m.CP, "dp": m.DP, "pp": m.PP,
			"expt_tp": m.ExptTP, "ep": m.EP, "expt_gtp_remat": m.ExptGTPRemat, "expt_dp": m.ExptDP}
		var pp [][]int
		if e, ok := m.Group("pp"); ok {
			pp = e.Groups()
		}
		for _, k := range grid.GroupKinds {
			e, ok := m.Group(k.Name)
			if k.LanguageOnly {
				if ok != (m.Name == grid.LanguageModule) {
					t.Fatalf("module %s has %s: %v:\n%s", m.Name, k.Name, ok, src)
				}
				if ok {
					checkEmbedding(t, m, k.Name, e.Groups(), pp, src)
				}
				continue
			}
			if !ok {
				t.Fatalf("module %s has no %s groups:\n%s", m.Name, k.Name, src)
			}
			size := 1
			for _, dim := range k.Dims {
				size *= sizes[dim]
			}
			if e.GroupSize() != size || e.NumGroups()*size != m.NumRanks {
				t.Fatalf("module %s %s: %d groups of %d, want groups of %d over %d ranks:\n%s", m.Name, k.Name, e.NumGroups(), e.GroupSize(), size, m.NumRanks, src)
			}
			seen := make([]bool, m.NumRanks)
			for gi, g := range e.Groups() {
				for _, r := range g {
					if r < lo || r >= hi || seen[r-lo] {
						t.Fatalf("module %s %s[%d] = %v: rank %d outside [%d, %d) or in two groups:\n%s", m.Name, k.Name, gi, g, r, lo, hi, src)
					}
					seen[r-lo] = true
				}
			}
			// NumGroups*size == NumRanks and no rank twice: every rank once.
		}
	}
}

func checkEmbedding(t *testing.T, m *grid.Module, kind string, groups, pp [][]int, src string) {
	t.Helper()
	if len(groups) != len(pp) {
		t.Fatalf("%s: %d groups for %d pp groups:\n%s", kind, len(groups), len(pp), src)
	}
	for i, g := range groups {
		for _, r := range g {
			if r < m.RankOffset || r >= m.RankOffset+m.NumRanks || !slices.Contains(pp[i], r) {
				t.Fatalf("%s[%d] = %v: rank %d is not in the language module's pp group %v:\n%s", kind, i, g, r, pp[i], src)
			}
		}
		want := []int{pp[i][0]}
		if kind == "embd" && len(pp[i]) > 1 {
			want = append(want, pp[i][len(pp[i])-1])
		}
		if !slices.Equal(g, want) {
			t.Fatalf("%s[%d] = %v, want %v (Megatron's default ranks of pp group %v):\n%s", kind, i, g, want, pp[i], src)
		}
	}
}

// The generator reaches valid layouts of both modes and every target
// often, so that the fuzz target's oracle is not vacuous.
func TestLayoutFromBytesOftenValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	valid := map[string]int{}
	const n = 2000
	for range n {
		b := make([]byte, 28)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		l, d := layout.Parse("gen.yaml", []byte(testutil.LayoutFromBytes(b)))
		if r := validate.Check(l, d); r.Valid(false) {
			valid[string(r.Topology.Mode)+" "+string(r.Topology.Target)]++
			checkTopology(t, r.Topology, testutil.LayoutFromBytes(b))
		}
	}
	t.Logf("valid of %d: %v", n, valid)
	for _, mode := range []topo.Mode{topo.Colocated, topo.NonColocated} {
		for _, target := range []string{"core", "megatron-lm", "megatron-bridge"} {
			if mode == topo.Colocated && target != "core" {
				continue // only core runs colocated modules
			}
			if valid[string(mode)+" "+target] < 10 {
				t.Errorf("only %d valid %s %s layouts of %d", valid[string(mode)+" "+target], mode, target, n)
			}
		}
	}
}
