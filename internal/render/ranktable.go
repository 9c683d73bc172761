package render

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// rankEntry is one module a rank serves: its coordinates and the groups
// (of the selected kinds) it belongs to, with their indices.
type rankEntry struct {
	m      *grid.Module
	c      coords
	groups []grid.Group
	index  map[string]int
}

// rankTable prints the table form of --rank: per module the rank's
// coordinates as positions (tp 1/2) and its groups, folded like a
// module's table.
func rankTable(w *bufio.Writer, t *topo.Topology, o Options, entries []rankEntry) error {
	r := o.Rank
	width := o.width()
	if node, gpu, placed := place(t, r); placed {
		fmt.Fprintf(w, "rank %d (node %d, local GPU %d)\n", r, node, gpu)
	} else {
		fmt.Fprintf(w, "rank %d\n", r)
	}
	if len(entries) == 0 {
		fmt.Fprintf(w, "no selected module holds rank %d\n", r)
	}
	for _, en := range entries {
		w.WriteByte('\n')
		dense, expert := positions(t, en.m, en.c)
		writeWrapped(w, append(append([]string{en.m.Name}, dense...), strings.TrimSpace(stage(en.c))), "  ", width)
		if expert != nil {
			writeWrapped(w, append([]string{"experts:"}, expert...), "  ", width)
		}
		rows, singletons := foldKinds(en.groups, o.AllGroups)
		if len(rows) > 0 {
			if err := rankGroupsTable(w, t, o, en, rows); err != nil {
				return err
			}
		}
		if len(singletons) > 0 {
			writeWrapped(w, append([]string{"singletons (only rank " + strconv.Itoa(r) + "):"}, singletons...), " ", width)
		}
	}
	return nil
}

// positions labels a rank's coordinates as positions out of the size:
// "tp 1/2" is the second of two tensor-parallel ranks. Dims of size 1 are
// left out but for tp, dp, pp, ep and expt_dp; the expert positions are
// nil for a module without experts.
func positions(t *topo.Topology, m *grid.Module, c coords) (dense, expert []string) {
	for i, n := range c.names {
		size, _ := m.Size(n)
		label := fmt.Sprintf("%s %d/%d", n, c.values[i], size)
		if size == 1 && !slices.Contains([]string{"tp", "dp", "pp", "ep", "expt_dp"}, n) {
			continue
		}
		if i < len(grid.BaseDims) {
			dense = append(dense, label)
		} else if hasExperts(t, m) {
			expert = append(expert, label)
		}
	}
	return dense, expert
}

// rankGroupsTable is the table of one rank's groups in one module: the
// group's index, size, nodes and members, cut to fit the width unless
// Full.
func rankGroupsTable(w *bufio.Writer, t *topo.Topology, o Options, en rankEntry, rows []kindRow) error {
	if o.Full {
		fullRankGroupsTable(w, t, o, en, rows)
		return nil
	}
	c := newRankColumns(t, en, rows)
	texts := make([]string, len(rows))
	ranks := len(c.header[len(c.header)-1])
	for i, r := range rows {
		texts[i] = groupText(r.e, en.index[r.names[0]])
		ranks = max(ranks, len(texts[i]))
	}
	names, ranks := split(o, boxOverhead(len(c.header))+c.fixed, c.names, c.minNames, ranks)
	out := make([][]string, len(rows))
	for i, r := range rows {
		row := []string{strings.Join(wrap(r.names, " = ", names), "\n")}
		row = append(row, c.cells[i]...)
		out[i] = append(row, strings.Join(wrap(strings.Fields(texts[i]), " ", ranks), "\n"))
	}
	return writeTable(w, o.Format, c.header, c.right, out)
}

// rankColumns is what a rank's group table shows beside the members, in
// both of its writers: the header, the columns that align right, each
// row's index, size and nodes, the name column's natural and narrowest
// widths, and the numeric columns' summed width.
type rankColumns struct {
	header                 []string
	right                  []bool
	cells                  [][]string
	names, minNames, fixed int
}

func newRankColumns(t *topo.Topology, en rankEntry, rows []kindRow) rankColumns {
	placed := t.Cluster != nil && t.Cluster.GPUsPerNode > 0
	c := rankColumns{header: []string{"group", "index", "size"}, right: []bool{false, true, true}}
	if placed {
		c.header = append(c.header, "nodes")
		c.right = append(c.right, true)
	}
	c.header = append(c.header, "ranks")
	c.right = append(c.right, false)
	c.names, c.minNames = len(c.header[0]), len(c.header[0])
	numeric := make([]int, len(c.header)-2)
	c.cells = make([][]string, len(rows))
	for i, r := range rows {
		idx := en.index[r.names[0]]
		cell := []string{strconv.Itoa(idx), strconv.Itoa(r.e.GroupSize())}
		if placed {
			cell = append(cell, strconv.Itoa(groupNodes(r.e, idx, t.Cluster.GPUsPerNode)))
		}
		for j, x := range cell {
			numeric[j] = max(numeric[j], len(x), len(c.header[j+1]))
		}
		c.cells[i] = cell
		c.names = max(c.names, len(strings.Join(r.names, " = ")))
		for _, n := range r.names {
			c.minNames = max(c.minNames, len(n)+2)
		}
	}
	for _, n := range numeric {
		c.fixed += n
	}
	return c
}
