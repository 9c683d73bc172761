package render

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// DefaultPage is how many ranks a --by rank table shows when neither
// --limit nor --full says otherwise.
const DefaultPage = 64

// page is the ranks [lo, hi) that --by rank prints.
func page(t *topo.Topology, o Options) (lo, hi int, err error) {
	if o.Offset >= t.WorldSize {
		return 0, 0, usage("--offset %d is past the last rank, %d", o.Offset, t.WorldSize-1)
	}
	lo, hi = o.Offset, t.WorldSize
	limit := o.Limit
	if limit == 0 && !o.Full && (o.Format == "text" || o.Format == "markdown") {
		limit = DefaultPage
	}
	if limit > 0 {
		hi = min(hi, lo+limit)
	}
	return lo, hi, nil
}

// kindList is the selected group kinds in catalogue order; none without
// --group.
func (s selection) kindList() []string {
	var out []string
	for _, k := range grid.GroupKinds {
		if s.kinds[k.Name] {
			out = append(out, k.Name)
		}
	}
	return out
}

// groupIndex is the index of the group of kind that holds rank in m, or
// "-" when m has no such kind or no group of it holds rank (embd).
func groupIndex(m *grid.Module, kind string, rank int) string {
	e, ok := m.Group(kind)
	if !ok {
		return "-"
	}
	if i := e.GroupOf(rank); i >= 0 {
		return strconv.Itoa(i)
	}
	return "-"
}

// byRankTable prints ranks [lo, hi) as a table: the coordinates of the
// dims that are more than 1 in some selected module, the group index of
// each kind --group asks for, and a line saying which ranks were shown.
// Every page is streamed: its widths come from the sizes, not the rows.
func byRankTable(w *bufio.Writer, t *topo.Topology, sel selection, o Options, lo, hi int, kinds []string) error {
	placed := t.Cluster != nil && t.Cluster.GPUsPerNode > 0
	header := []string{"rank", "node", "gpu", "module"}
	widths := []int{digits(hi - 1), 1, 1, 0}
	if placed {
		widths[1] = digits((hi - 1) / t.Cluster.GPUsPerNode)
		widths[2] = digits(t.Cluster.GPUsPerNode - 1)
	}
	right := []bool{true, true, true, false}
	// dims: the coordinates worth a column, as indices into coords.values.
	var dims []int
	for j, name := range byRankColumns {
		widest := 0
		for _, m := range sel.modules {
			widest = max(widest, dimSize(m, name))
		}
		if widest > 1 || name == "pp" {
			dims = append(dims, j)
			header = append(header, name)
			widths = append(widths, digits(widest-1))
			right = append(right, true)
		}
	}
	for _, m := range sel.modules {
		widths[3] = max(widths[3], len(m.Name))
	}
	for _, k := range kinds {
		header = append(header, k+" group")
		widest := 1
		for _, m := range sel.modules {
			if e, ok := m.Group(k); ok {
				widest = max(widest, digits(e.NumGroups()-1))
			}
		}
		widths = append(widths, widest)
		right = append(right, true)
	}
	tb := newStreamTable(w, o.Format, header, widths, right)
	curs := make([]*rankCursor, len(sel.modules))
	for i, m := range sel.modules {
		curs[i] = newRankCursor(m, m.Name)
		curs[i].seek(lo)
	}
	rows := 0
	for r := lo; r < hi; r++ {
		for i, m := range sel.modules {
			c := curs[i]
			if r < c.lo || r >= c.hi {
				continue
			}
			tb.SetCell(0, strconv.AppendInt(tb.Cell(0), int64(r), 10))
			if node, gpu, ok := place(t, r); ok {
				tb.SetCell(1, strconv.AppendInt(tb.Cell(1), int64(node), 10))
				tb.SetCell(2, strconv.AppendInt(tb.Cell(2), int64(gpu), 10))
			} else {
				tb.SetCell(1, append(tb.Cell(1), '-'))
				tb.SetCell(2, append(tb.Cell(2), '-'))
			}
			tb.SetCell(3, append(tb.Cell(3), c.name...))
			values := c.values()
			for k, j := range dims {
				if j >= len(grid.BaseDims) && !hasExperts(t, m) {
					tb.SetCell(4+k, append(tb.Cell(4+k), '-')) // a dense module's expert view says nothing
					continue
				}
				tb.SetCell(4+k, strconv.AppendInt(tb.Cell(4+k), int64(values[j]), 10))
			}
			for k, kind := range kinds {
				tb.SetCell(4+len(dims)+k, append(tb.Cell(4+len(dims)+k), groupIndex(m, kind, r)...))
			}
			tb.line(tb.cells, right)
			c.next()
			rows++
		}
	}
	tb.close()
	if lo > 0 || hi < t.WorldSize {
		fmt.Fprintf(w, "ranks %d-%d of %d (%d rows)", lo, hi-1, t.WorldSize, rows)
		if hi < t.WorldSize {
			fmt.Fprintf(w, "; next: --offset %d", hi)
			if o.Limit == 0 {
				w.WriteString(", or --full for every rank")
			}
		}
		w.WriteByte('\n')
	}
	return nil
}

// dimSize is the size of one of a module's dims, by name.
func dimSize(m *grid.Module, name string) int {
	i := slices.Index(byRankColumns, name)
	return []int{m.TP, m.GTPRemat, m.CP, m.DP, m.PP, m.ExptTP, m.EP, m.ExptGTPRemat, m.ExptDP}[i]
}
