package render

import (
	"bufio"
	"slices"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// renderRank prints the groups one rank belongs to, module by module,
// with its coordinates.
func renderRank(w *bufio.Writer, t *topo.Topology, sel selection, o Options) error {
	entries := rankEntries(sel, o.Rank)
	switch o.Format {
	case "json", "yaml":
		return streamRank(w, t, o.Rank, entries, o.Format == "yaml")
	case "csv":
		o2 := newOut(w)
		o2.s("module,group,index,size,ranks\n")
		for _, en := range entries {
			for _, g := range en.groups {
				i := en.index[g.Kind]
				o2.f("%s,%s,%d,%d,", en.m.Name, g.Kind, i, g.Enum.GroupSize())
				o2.group(g.Enum, i, ' ', false)
				o2.s("\n")
			}
		}
		return o2.close()
	default:
		return rankTable(w, t, o, entries)
	}
}

// rankEntries are the selected modules that hold rank r, each with r's
// coordinates and the selected groups that hold it.
func rankEntries(sel selection, r int) []rankEntry {
	var entries []rankEntry
	for _, m := range sel.modules {
		if !m.Grid.Contains(r) {
			continue
		}
		re := rankEntry{m: m, c: coordsOf(m, r), index: map[string]int{}}
		for _, g := range sel.groups(m) {
			if i := g.Enum.GroupOf(r); i >= 0 {
				re.groups = append(re.groups, grid.Group{Kind: g.Kind, Enum: g.Enum})
				re.index[g.Kind] = i
			}
		}
		entries = append(entries, re)
	}
	return entries
}

func stage(c coords) string {
	switch {
	case c.ps == 1:
		return "  (only pp stage)"
	case c.pp == 0:
		return "  (first pp stage)"
	case c.pp == c.ps-1:
		return "  (last pp stage)"
	}
	return ""
}

// byRankColumns are the columns of --by rank, after rank, node, local_gpu
// and module: the dims of both views, pp once (as coordsOf).
var byRankColumns = append(slices.Clone(grid.BaseDims), grid.ExpertDims[:len(grid.ExpertDims)-1]...)

// renderByRank prints one row per (rank, module) of the ranks --limit and
// --offset page: a colocated rank has a row for every module it serves.
func renderByRank(w *bufio.Writer, t *topo.Topology, sel selection, o Options) error {
	lo, hi, err := page(t, o)
	if err != nil {
		return err
	}
	kinds := sel.kindList()
	switch o.Format {
	case "json", "yaml", "csv":
		header := append([]string{"rank", "node", "local_gpu", "module"}, byRankColumns...)
		header = append(header, "first_pp_stage", "last_pp_stage")
		for _, k := range kinds {
			header = append(header, k+"_group")
		}
		return byRankStream(w, t, sel, o.Format, header, lo, hi, kinds)
	}
	return byRankTable(w, t, sel, o, lo, hi, kinds)
}
