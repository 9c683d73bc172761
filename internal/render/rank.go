package render

import (
	"bufio"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// renderRank prints the groups one rank belongs to, module by module,
// with its coordinates.
func renderRank(w *bufio.Writer, t *topo.Topology, sel selection, o Options) error {
	r := o.Rank
	type member struct {
		kind  string
		index int
		e     grid.Enum
	}
	type entry struct {
		m      *grid.Module
		c      coords
		groups []member
	}
	var entries []entry
	for _, m := range sel.modules {
		if !m.Grid.Contains(r) {
			continue
		}
		en := entry{m: m, c: coordsOf(m, r)}
		for _, g := range sel.groups(m) {
			if i := g.Enum.GroupOf(r); i >= 0 {
				en.groups = append(en.groups, member{g.Kind, i, g.Enum})
			}
		}
		entries = append(entries, en)
	}
	node, gpu, placed := place(t, r)
	o2 := newOut(w)
	switch o.Format {
	case "json", "yaml":
		yaml := o.Format == "yaml"
		key := func(k string, first bool) {
			switch {
			case yaml:
				o2.s(k + ": ")
			case first:
				o2.s(`"` + k + `":`)
			default:
				o2.s(`,"` + k + `":`)
			}
		}
		opt := func(v int, ok bool) {
			if ok {
				o2.int(v)
			} else {
				o2.s("null")
			}
		}
		if !yaml {
			o2.s("{")
		}
		key("rank", true)
		o2.int(r)
		nl(o2, yaml)
		key("node", false)
		opt(node, placed)
		nl(o2, yaml)
		key("local_gpu", false)
		opt(gpu, placed)
		nl(o2, yaml)
		key("modules", false)
		if yaml {
			if len(entries) == 0 {
				o2.s("[]")
			}
			o2.s("\n")
		} else {
			o2.s("[")
		}
		for i, en := range entries {
			if yaml {
				o2.s("  - name: ")
				o2.quoted(en.m.Name)
				o2.s("\n    coords: {")
			} else {
				if i > 0 {
					o2.s(",")
				}
				o2.s(`{"name":`)
				o2.quoted(en.m.Name)
				o2.s(`,"coords":{`)
			}
			for j, n := range en.c.names {
				if j > 0 {
					o2.s(", ")
				}
				if yaml {
					o2.s(n + ": ")
				} else {
					o2.s(`"` + n + `":`)
				}
				o2.int(en.c.values[j])
			}
			if yaml {
				o2.f("}\n    first_pp_stage: %t\n    last_pp_stage: %t\n    groups:", en.c.pp == 0, en.c.pp == en.c.ps-1)
				if len(en.groups) == 0 {
					o2.s(" {}")
				}
				o2.s("\n")
			} else {
				o2.f(`},"first_pp_stage":%t,"last_pp_stage":%t,"groups":{`, en.c.pp == 0, en.c.pp == en.c.ps-1)
			}
			for j, g := range en.groups {
				if yaml {
					o2.s("      " + g.kind + ": ")
				} else {
					if j > 0 {
						o2.s(",")
					}
					o2.s(`"` + g.kind + `":`)
				}
				o2.group(g.e, g.index, ',', true)
				if yaml {
					o2.s("\n")
				}
			}
			if !yaml {
				o2.s("}}")
			}
		}
		if !yaml {
			o2.s("]}\n")
		}
		return o2.close()
	case "csv":
		o2.s("module,group,index,size,ranks\n")
		for _, en := range entries {
			for _, g := range en.groups {
				o2.f("%s,%s,%d,%d,", en.m.Name, g.kind, g.index, g.e.GroupSize())
				o2.group(g.e, g.index, ' ', false)
				o2.s("\n")
			}
		}
		return o2.close()
	default:
		var rs []rankEntry
		for _, e := range entries {
			re := rankEntry{m: e.m, c: e.c, index: map[string]int{}}
			for _, g := range e.groups {
				re.groups = append(re.groups, grid.Group{Kind: g.kind, Enum: g.e})
				re.index[g.kind] = g.index
			}
			rs = append(rs, re)
		}
		return rankTable(w, t, o, rs)
	}
}

func nl(o *out, yaml bool) {
	if yaml {
		o.s("\n")
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
// and module.
var byRankColumns = []string{"tp", "gtp_remat", "cp", "dp", "pp", "expt_tp", "ep", "expt_gtp_remat", "expt_dp"}

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
