package diff

import (
	"slices"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// place is one rank's modules and stages on one side.
type place struct {
	modules string
	stages  map[string]string
}

func placeOf(t *topo.Topology, r int) place {
	p := place{stages: map[string]string{}}
	for _, m := range t.Modules {
		if r < m.RankOffset || r >= m.RankOffset+m.NumRanks {
			continue
		}
		if p.modules != "" {
			p.modules += "+"
		}
		p.modules += m.Name
		_, v, _ := m.Grid.Coords(r, grid.BaseView)
		p.stages[m.Name] = itoa(v[len(v)-1]) + "/" + itoa(m.PP)
	}
	return p
}

// compareRanks counts the ranks whose modules, node or pipeline stage
// differ. It allocates nothing per rank (a 16,777,216-rank pair allocated
// 5 GB of per-rank maps and strings): the names and stages are compared in
// place, and placeOf builds the text only for the examples kept.
func compareRanks(ta, tb *topo.Topology) Ranks {
	var out Ranks
	ga, gb := gpn(ta), gpn(tb)
	byName := map[string]*grid.Module{}
	for _, m := range tb.Modules {
		byName[m.Name] = m
	}
	var na, nb []string
	for r := range max(ta.WorldSize, tb.WorldSize) {
		node := Pair[int]{-1, -1}
		if ga > 0 && r < ta.WorldSize {
			node.A = r / ga
		}
		if gb > 0 && r < tb.WorldSize {
			node.B = r / gb
		}
		na, nb = modulesAt(na[:0], ta, r), modulesAt(nb[:0], tb, r)
		moduleChanged := !slices.Equal(na, nb)
		nodeChanged := node.A >= 0 && node.B >= 0 && node.Changed()
		stageChanged := false
		for _, ma := range ta.Modules {
			if mb := byName[ma.Name]; holds(ma, r) && mb != nil && holds(mb, r) && (stageOf(ma, r) != stageOf(mb, r) || ma.PP != mb.PP) {
				stageChanged = true
			}
		}
		if moduleChanged {
			out.ModuleChanged++
		}
		if nodeChanged {
			out.NodeChanged++
		}
		if stageChanged {
			out.StageChanged++
		}
		if (moduleChanged || nodeChanged || stageChanged) && len(out.Examples) < maxExamples {
			pa, pb := placeOf(ta, r), placeOf(tb, r)
			rc := RankChange{Rank: r, Modules: Pair[string]{pa.modules, pb.modules}, Node: node}
			stages := map[string]Pair[string]{}
			for name, sa := range pa.stages {
				if sb, ok := pb.stages[name]; ok && sa != sb {
					stages[name] = Pair[string]{sa, sb}
				}
			}
			if len(stages) > 0 {
				rc.Stages = stages
			}
			out.Examples = append(out.Examples, rc)
		}
	}
	return out
}

func holds(m *grid.Module, r int) bool { return r >= m.RankOffset && r < m.RankOffset+m.NumRanks }

// modulesAt appends the names of t's modules that hold rank r, in order.
func modulesAt(dst []string, t *topo.Topology, r int) []string {
	for _, m := range t.Modules {
		if holds(m, r) {
			dst = append(dst, m.Name)
		}
	}
	return dst
}

// stageOf is rank r's pipeline stage in m: pp is the outermost of the
// base dims (grid.BaseDims), so a stage is NumRanks/PP consecutive ranks;
// TestStageOfIsCoords holds it to the grid's own coordinates.
func stageOf(m *grid.Module, r int) int { return (r - m.RankOffset) / (m.NumRanks / m.PP) }

func compareBatch(a, b *validate.Result) Batch {
	var out Batch
	if bt := a.Topology.Batch; bt != nil {
		out.MicroBatchSize.A, out.GlobalBatchSize.A = bt.MicroBatchSize, bt.GlobalBatchSize
	}
	if bt := b.Topology.Batch; bt != nil {
		out.MicroBatchSize.B, out.GlobalBatchSize.B = bt.MicroBatchSize, bt.GlobalBatchSize
	}
	for _, f := range a.Diags.Notes {
		if !slices.Contains(b.Diags.Notes, f) {
			out.Removed = append(out.Removed, f)
		}
	}
	for _, f := range b.Diags.Notes {
		if !slices.Contains(a.Diags.Notes, f) {
			out.Added = append(out.Added, f)
		}
	}
	return out
}
