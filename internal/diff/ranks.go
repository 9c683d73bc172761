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

func compareRanks(ta, tb *topo.Topology) Ranks {
	var out Ranks
	ga, gb := gpn(ta), gpn(tb)
	for r := range max(ta.WorldSize, tb.WorldSize) {
		pa, pb := placeOf(ta, r), placeOf(tb, r)
		node := Pair[int]{-1, -1}
		if ga > 0 && r < ta.WorldSize {
			node.A = r / ga
		}
		if gb > 0 && r < tb.WorldSize {
			node.B = r / gb
		}
		moduleChanged := pa.modules != pb.modules
		nodeChanged := node.A >= 0 && node.B >= 0 && node.Changed()
		stages := map[string]Pair[string]{}
		for name, sa := range pa.stages {
			if sb, ok := pb.stages[name]; ok && sa != sb {
				stages[name] = Pair[string]{sa, sb}
			}
		}
		if moduleChanged {
			out.ModuleChanged++
		}
		if nodeChanged {
			out.NodeChanged++
		}
		if len(stages) > 0 {
			out.StageChanged++
		}
		if (moduleChanged || nodeChanged || len(stages) > 0) && len(out.Examples) < maxExamples {
			rc := RankChange{Rank: r, Modules: Pair[string]{pa.modules, pb.modules}, Node: node}
			if len(stages) > 0 {
				rc.Stages = stages
			}
			out.Examples = append(out.Examples, rc)
		}
	}
	return out
}

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
