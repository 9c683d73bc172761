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
	placed := t.Cluster != nil && t.Cluster.GPUsPerNode > 0
	header := []string{"group", "index", "size"}
	right := []bool{false, true, true}
	if placed {
		header = append(header, "nodes")
		right = append(right, true)
	}
	header = append(header, "ranks")
	right = append(right, false)
	names, minNames, fixed := len(header[0]), len(header[0]), 0
	numeric := make([]int, len(header)-2)
	cells := make([][]string, len(rows))
	texts := make([]string, len(rows))
	for i, r := range rows {
		idx := en.index[r.names[0]]
		c := []string{strconv.Itoa(idx), strconv.Itoa(r.e.GroupSize())}
		if placed {
			c = append(c, strconv.Itoa(groupNodes(r.e, idx, t.Cluster.GPUsPerNode)))
		}
		for j, x := range c {
			numeric[j] = max(numeric[j], len(x), len(header[j+1]))
		}
		cells[i] = c
		texts[i] = groupText(r.e, idx)
		names = max(names, len(strings.Join(r.names, " = ")))
		for _, n := range r.names {
			minNames = max(minNames, len(n)+2)
		}
	}
	for _, n := range numeric {
		fixed += n
	}
	ranks := len(header[len(header)-1])
	for _, x := range texts {
		ranks = max(ranks, len(x))
	}
	names, ranks = split(o, boxOverhead(len(header))+fixed, names, minNames, ranks)
	out := make([][]string, len(rows))
	for i, r := range rows {
		row := []string{strings.Join(wrap(r.names, " = ", names), "\n")}
		row = append(row, cells[i]...)
		out[i] = append(row, strings.Join(wrap(strings.Fields(texts[i]), " ", ranks), "\n"))
	}
	return writeTable(w, o.Format, header, right, out)
}
