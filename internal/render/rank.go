package render

import (
	"bufio"
	"slices"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// plainMembers is the most group members (summed over the rank's groups)
// that --rank's json and yaml build as one document for encoding/json
// and yaml.v3; above it (a group of a million ranks) the same document
// is streamed, in constant memory.
const plainMembers = 1 << 16

// renderRank prints the groups one rank belongs to, module by module,
// with its coordinates. Its json and yaml are built whole when they hold
// at most plain members, streamed otherwise.
func renderRank(w *bufio.Writer, t *topo.Topology, sel selection, o Options, plain int) error {
	r := o.Rank
	var entries []rankEntry
	members := 0
	for _, m := range sel.modules {
		if !m.Grid.Contains(r) {
			continue
		}
		re := rankEntry{m: m, c: coordsOf(m, r), index: map[string]int{}}
		for _, g := range sel.groups(m) {
			if i := g.Enum.GroupOf(r); i >= 0 {
				re.groups = append(re.groups, grid.Group{Kind: g.Kind, Enum: g.Enum})
				re.index[g.Kind] = i
				members += g.Enum.GroupSize()
			}
		}
		entries = append(entries, re)
	}
	switch o.Format {
	case "json", "yaml":
		if members > plain {
			return streamRank(w, t, r, entries, o.Format == "yaml")
		}
		return newRankDoc(t, r, entries).write(w, o.Format)
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
