package render

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/english"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// groupsTable is the table form of render: per module a heading and its
// folded table (or, with Full, a row per group).
func groupsTable(w *bufio.Writer, t *topo.Topology, sel selection, o Options) error {
	width := o.width()
	writeWrapped(w, []string{title(t, o.Format) + ":", fmt.Sprintf("%d ranks,", t.WorldSize), string(t.Mode) + ",", english.Plural(len(t.Modules), "module")}, " ", width)
	for _, m := range sel.modules {
		w.WriteByte('\n')
		writeWrapped(w, moduleHeading(t, m), " ", width)
		if o.Full {
			fullGroupsTable(w, t, o, sel.groups(m))
			continue
		}
		rows, singletons := foldKinds(sel.groups(m), o.AllGroups)
		if len(rows) > 0 {
			if err := foldedTable(w, t, o, rows); err != nil {
				return err
			}
		}
		if len(singletons) > 0 {
			writeWrapped(w, append([]string{"singletons:"}, singletons...), " ", width)
		}
	}
	return nil
}

// moduleHeading is the pieces of a module's heading: name, span, nodes
// and the sizes that are not 1.
func moduleHeading(t *topo.Topology, m *grid.Module) []string {
	parts := []string{m.Name, fmt.Sprintf(" ranks [%d, %d)", m.RankOffset, m.RankOffset+m.NumRanks)}
	if t.Cluster != nil && t.Cluster.GPUsPerNode > 0 {
		gpn := t.Cluster.GPUsPerNode
		first, last := m.RankOffset/gpn, (m.RankOffset+m.NumRanks-1)/gpn
		if first == last {
			parts = append(parts, fmt.Sprintf(" node %d", first))
		} else {
			parts = append(parts, fmt.Sprintf(" nodes %d-%d", first, last))
		}
	}
	parts[len(parts)-1] += " "
	return append(parts, strings.Fields(sizes(t, m))...)
}

// writeWrapped writes words separated by sep, over as many lines as
// width asks; continuation lines are indented by two.
func writeWrapped(w *bufio.Writer, words []string, sep string, width int) {
	for i, line := range wrap(words, sep, width-2) {
		if i > 0 {
			w.WriteString("  ")
		}
		w.WriteString(strings.TrimSpace(line))
		w.WriteByte('\n')
	}
}

// foldedTable is a module's table: a row per kind (or set of identical
// kinds), with the number of groups, their size, how many nodes one spans
// and the first groups, cut to fit width.
func foldedTable(w *bufio.Writer, t *topo.Topology, o Options, rows []kindRow) error {
	placed := t.Cluster != nil && t.Cluster.GPUsPerNode > 0
	header := []string{"group", "groups", "size"}
	right := []bool{false, true, true}
	if placed {
		header = append(header, "nodes")
		right = append(right, true)
	}
	header = append(header, "ranks")
	right = append(right, false)

	cells := make([][]string, len(rows))
	fixed, names, ranks, minNames := 0, len(header[0]), len(header[len(header)-1]), len(header[0])
	numeric := make([]int, len(header)-2)
	for i, r := range rows {
		c := []string{strconv.Itoa(r.e.NumGroups()), strconv.Itoa(r.e.GroupSize())}
		if placed {
			c = append(c, spanText(nodeSpan(r.e, t.Cluster.GPUsPerNode)))
		}
		for j, x := range c {
			numeric[j] = max(numeric[j], len(x), len(header[j+1]))
		}
		cells[i] = c
		names = max(names, len(strings.Join(r.names, " = ")))
		ranks = max(ranks, wantedWidth(r.e))
		for _, n := range r.names {
			minNames = max(minNames, len(n)+2)
		}
	}
	for _, n := range numeric {
		fixed += n
	}
	names, ranks = split(o, boxOverhead(len(header))+fixed, names, minNames, ranks)
	out := make([][]string, len(rows))
	for i, r := range rows {
		row := []string{strings.Join(wrap(r.names, " = ", names), "\n")}
		row = append(row, cells[i]...)
		out[i] = append(row, strings.Join(wrap(strings.Fields(groupsText(r.e, ranks)), " ", ranks), "\n"))
	}
	return writeTable(w, o.Format, header, right, out)
}

// split shares the width left by the other columns between the names
// column (natural width names, at least minNames) and the ranks column
// (which wants ranks): names give way first. Markdown rows are one line
// whatever their length, so nothing is cut.
func split(o Options, used, names, minNames, ranks int) (int, int) {
	if o.Format == "markdown" {
		return 1 << 30, 1 << 30
	}
	avail := o.width() - used
	if names+ranks <= avail {
		return names, avail - names
	}
	names = min(names, max(minNames, avail-ranks))
	return names, max(avail-names, 10)
}

// fullGroupsTable streams one row per group, long groups over several rows.
func fullGroupsTable(w *bufio.Writer, t *topo.Topology, o Options, groups []grid.Group) {
	placed := t.Cluster != nil && t.Cluster.GPUsPerNode > 0
	widths := []int{0, 0, 0, 0}
	longest := 0
	for _, g := range groups {
		widths[0] = max(widths[0], len(g.Kind))
		widths[1] = max(widths[1], digits(g.Enum.NumGroups()-1))
		widths[2] = max(widths[2], digits(g.Enum.GroupSize()))
		longest = max(longest, longestGroup(g.Enum, 1<<20))
	}
	header := []string{"group", "index", "size", "ranks"}
	right := []bool{false, true, true, false}
	if placed {
		header = []string{"group", "index", "size", "nodes", "ranks"}
		right = []bool{false, true, true, true, false}
		nodes := digits((t.WorldSize - 1) / t.Cluster.GPUsPerNode)
		for _, g := range groups {
			if _, hi := nodeSpan(g.Enum, t.Cluster.GPUsPerNode); hi > 1 {
				nodes = 2*nodes + 1 // first-last
				break
			}
		}
		widths = []int{widths[0], widths[1], widths[2], nodes, 0}
	}
	fixed := 0
	for i, n := range widths[:len(widths)-1] {
		fixed += max(n, len(header[i]))
	}
	widths[len(widths)-1] = min(longest, max(o.width()-boxOverhead(len(header))-fixed, 16))
	if o.Format == "markdown" {
		widths[len(widths)-1] = min(longest, wrapWidth)
	}
	tb := newStreamTable(w, o.Format, header, widths, right)
	last := len(header) - 1
	for _, g := range groups {
		tb.SetCell(0, append(tb.Cell(0), g.Kind...))
		tb.SetCell(2, strconv.AppendInt(tb.Cell(2), int64(g.Enum.GroupSize()), 10))
		for i := range g.Enum.NumGroups() {
			tb.SetCell(1, strconv.AppendInt(tb.Cell(1), int64(i), 10))
			if placed {
				tb.SetCell(3, appendNodes(tb.Cell(3), g.Enum, i, t.Cluster.GPUsPerNode))
			}
			tb.SetCell(last, appendMembers(tb.Cell(last), g.Enum, i))
			tb.Row()
		}
	}
	tb.close()
}

// wrapWidth is the widest a ranks cell of a --full Markdown table gets: a
// Markdown table has no continuation rows of its own, so a long group goes
// on over rows with the other cells empty, as in a box table.
const wrapWidth = 96

// appendMembers appends group i of e in full, [a b c], reading its
// members as runs.
func appendMembers(dst []byte, e grid.Enum, i int) []byte {
	dst = append(dst, '[')
	first := true
	e.Runs(i, func(start, stride, n int) {
		for k := range n {
			if !first {
				dst = append(dst, ' ')
			}
			first = false
			dst = strconv.AppendInt(dst, int64(start+k*stride), 10)
		}
	})
	return append(dst, ']')
}

// appendNodes appends the node of a group's first member, and of its last
// when that is another: first-last.
func appendNodes(dst []byte, e grid.Enum, i, gpn int) []byte {
	a, b := e.Rank(i, 0)/gpn, e.Rank(i, e.GroupSize()-1)/gpn
	dst = strconv.AppendInt(dst, int64(a), 10)
	if a == b {
		return dst
	}
	dst = append(dst, '-')
	return strconv.AppendInt(dst, int64(b), 10)
}

// longestGroup is the length of the longest group of e as members prints
// it in full, or some length over limit as soon as one is longer.
func longestGroup(e grid.Enum, limit int) int {
	longest := 0
	var buf []int
	for i := range e.NumGroups() {
		buf = e.AppendGroup(buf[:0], i)
		n := len(buf) + 1 // brackets and the spaces between members
		for _, r := range buf {
			n += digits(r)
		}
		if n > limit {
			return n
		}
		longest = max(longest, n)
	}
	return longest
}

// digits is the number of characters of a non-negative int.
func digits(v int) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}
