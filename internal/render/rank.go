package render

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// renderRank prints the groups one rank belongs to, module by module,
// with its coordinates.
func renderRank(w *bufio.Writer, t *validate.Topology, sel selection, o Options) error {
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
		where := ""
		if placed {
			where = fmt.Sprintf(" (node %d, local GPU %d)", node, gpu)
		}
		fmt.Fprintf(w, "rank %d%s\n", r, where)
		if len(entries) == 0 {
			fmt.Fprintf(w, "no selected module holds rank %d\n", r)
		}
		header := []string{"group", "index", "size", "ranks"}
		for _, en := range entries {
			var cs []string
			for j, n := range en.c.names {
				cs = append(cs, fmt.Sprintf("%s=%d", n, en.c.values[j]))
			}
			fmt.Fprintf(w, "\n%s  %s%s\n", en.m.Name, strings.Join(cs, " "), stage(en.c))
			rows := make([][]string, len(en.groups))
			widths := make([]int, len(header))
			for i, g := range en.groups {
				rows[i] = []string{g.kind, strconv.Itoa(g.index), strconv.Itoa(g.e.GroupSize()), members(g.e, g.index, o.Full)}
				for j, c := range rows[i] {
					widths[j] = max(widths[j], len(c))
				}
			}
			if err := writeRows(w, o, header, widths, rows); err != nil {
				return err
			}
		}
	}
	return nil
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

// foldRows is how many rows a --by rank table shows before folding.
const foldRows = 64

// renderByRank prints one row per (rank, module): a colocated rank has a
// row for every module it serves.
func renderByRank(w *bufio.Writer, t *validate.Topology, sel selection, o Options) error {
	header := append([]string{"rank", "node", "local_gpu", "module"}, byRankColumns...)
	header = append(header, "first_pp_stage", "last_pp_stage")
	type row struct {
		rank int
		m    *grid.Module
		c    coords
	}
	each := func(f func(row) error) error {
		for r := range t.WorldSize {
			for _, m := range sel.modules {
				if m.Grid.Contains(r) {
					if err := f(row{r, m, coordsOf(m, r)}); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	cells := func(x row) []string {
		node, gpu, placed := place(t, x.rank)
		out := []string{strconv.Itoa(x.rank), "-", "-", x.m.Name}
		if placed {
			out[1], out[2] = strconv.Itoa(node), strconv.Itoa(gpu)
		}
		for _, v := range x.c.values {
			out = append(out, strconv.Itoa(v))
		}
		return append(out, strconv.FormatBool(x.c.pp == 0), strconv.FormatBool(x.c.pp == x.c.ps-1))
	}
	switch o.Format {
	case "json", "yaml", "csv":
		return byRankStream(w, t, sel, o.Format, header)
	default:
		if o.Full {
			tb, err := newStreamTable(w, o.Format, header, byRankWidths(t, sel))
			if err != nil {
				return err
			}
			if err := each(func(x row) error { return tb.row(cells(x)...) }); err != nil {
				return err
			}
			return tb.close()
		}
		tb := newTable(w, o.Format)
		tb.Header(header)
		n := 0
		err := each(func(x row) error {
			n++
			if n > foldRows {
				return nil
			}
			return tb.Append(cells(x))
		})
		if err != nil {
			return err
		}
		if err := tb.Render(); err != nil {
			return err
		}
		if n > foldRows {
			fmt.Fprintf(w, "... and %d more rows (--full shows all)\n", n-foldRows)
		}
	}
	return nil
}

// byRankWidths is the widest value of each --by rank column, from the
// sizes alone: a streamed table needs its widths before the first row.
func byRankWidths(t *validate.Topology, sel selection) []int {
	widths := []int{digits(t.WorldSize - 1), 1, 1, 0}
	if _, _, ok := place(t, 0); ok {
		widths[1] = digits((t.WorldSize - 1) / t.Cluster.GPUsPerNode)
		widths[2] = digits(t.Cluster.GPUsPerNode - 1)
	}
	coords := make([]int, len(byRankColumns))
	for _, m := range sel.modules {
		widths[3] = max(widths[3], len(m.Name))
		sizes := []int{m.TP, m.GTPRemat, m.CP, m.DP, m.PP, m.ExptTP, m.EP, m.ExptGTPRemat, m.ExptDP}
		for j, s := range sizes {
			coords[j] = max(coords[j], digits(s-1))
		}
	}
	widths = append(widths, coords...)
	return append(widths, len("false"), len("false"))
}

// writeRows writes a small table: rendered at the end, or streamed with
// long last cells over continuation rows when o.Full.
func writeRows(w io.Writer, o Options, header []string, widths []int, rows [][]string) error {
	if !o.Full {
		tb := newTable(w, o.Format)
		tb.Header(header)
		for _, r := range rows {
			if err := tb.Append(r); err != nil {
				return err
			}
		}
		return tb.Render()
	}
	last := len(widths) - 1
	widths[last] = wrappedWidth(widths[last])
	tb, err := newStreamTable(w, o.Format, header, widths)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := tb.row(r...); err != nil {
			return err
		}
	}
	return tb.close()
}
