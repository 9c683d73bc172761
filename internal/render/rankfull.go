package render

import (
	"bufio"
	"strconv"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// fullRankGroupsTable is rankGroupsTable with Full, streamed: byte for
// byte the table tablewriter draws from the whole member lists, but each
// group's members are read twice from the enumeration's runs (once for
// the column's width, once to write them) and never held: a rank of a
// 16,777,216-rank module has groups of millions of members, whose text
// and fields took 1.8 GB and minutes.
func fullRankGroupsTable(w *bufio.Writer, t *topo.Topology, o Options, en rankEntry, rows []kindRow) {
	c := newRankColumns(t, en, rows)
	header, right, cells := c.header, c.right, c.cells
	last := len(header) - 1
	ranks := len(header[last])
	for _, r := range rows {
		ranks = max(ranks, membersLen(r.e, en.index[r.names[0]]))
	}
	names, ranks := split(o, boxOverhead(len(header))+c.fixed, c.names, c.minNames, ranks)
	// The columns' widths, as tablewriter takes them: the widest line of
	// each cell once wrapped.
	nameLines := make([][]string, len(rows))
	widths := make([]int, len(header))
	for i, r := range rows {
		nameLines[i] = wrap(r.names, " = ", names)
		for _, l := range nameLines[i] {
			widths[0] = max(widths[0], len(l))
		}
		for j, x := range cells[i] {
			widths[j+1] = max(widths[j+1], len(x))
		}
		if n := membersLen(r.e, en.index[r.names[0]]); n <= ranks {
			widths[last] = max(widths[last], n)
			continue
		}
		wrapMembers(r.e, en.index[r.names[0]], ranks, func(line []byte) { widths[last] = max(widths[last], len(line)) })
	}
	tb := newStreamTable(w, o.Format, header, widths, right)
	row := make([][]byte, len(header))
	for i, r := range rows {
		n := 0
		fill := func() {
			for j := range row {
				row[j] = row[j][:0]
			}
			if n < len(nameLines[i]) {
				row[0] = append(row[0], nameLines[i][n]...)
			}
			if n == 0 {
				for j, x := range cells[i] {
					row[j+1] = append(row[j+1], x...)
				}
			}
		}
		put := func(line []byte) {
			fill()
			row[last] = append(row[last], line...)
			tb.line(row, right)
			n++
		}
		idx := en.index[r.names[0]]
		if size := membersLen(r.e, idx); size <= ranks {
			// One line (always in Markdown, whose cells do not wrap):
			// the members go straight to the output.
			fill()
			tb.lineWith(row[:last], right, size, func() { writeMembers(w, r.e, idx) })
			n++
		} else {
			wrapMembers(r.e, idx, ranks, put)
		}
		for n < len(nameLines[i]) {
			put(nil)
		}
	}
	tb.close()
}

// membersLen is the length of appendMembers(nil, e, i), counted.
func membersLen(e grid.Enum, i int) int {
	n := 2 - 1 // the brackets, less the first member's space
	e.Runs(i, func(start, stride, k int) {
		for j := range k {
			n += 1 + digits(start+j*stride)
		}
	})
	return n
}

// wrapMembers calls line with each line of wrap(strings.Fields(
// appendMembers(nil, e, i)), " ", width), the members read from the runs
// as it goes: the buffer holds one line.
func wrapMembers(e grid.Enum, i, width int, line func([]byte)) {
	size := e.GroupSize()
	var cur, word []byte
	k := 0
	e.Runs(i, func(start, stride, n int) {
		for j := range n {
			word = word[:0]
			if k == 0 {
				word = append(word, '[')
			}
			word = strconv.AppendInt(word, int64(start+j*stride), 10)
			if k == size-1 {
				word = append(word, ']')
			}
			k++
			switch {
			case len(cur) == 0:
				cur = append(cur, word...)
			case len(cur)+1+len(word) <= width:
				cur = append(append(cur, ' '), word...)
			default:
				line(cur)
				cur = append(cur[:0], word...)
			}
			for len(cur) > width {
				head, rest := cutBytes(cur, width)
				if len(rest) == 0 {
					break
				}
				line(head)
				cur = append(cur[:0:0], rest...)
			}
		}
	})
	if len(cur) > 0 || k == 0 {
		line(cur)
	}
}

// writeMembers writes appendMembers(nil, e, i) to w, a member at a time.
func writeMembers(w *bufio.Writer, e grid.Enum, i int) {
	var buf []byte
	w.WriteByte('[')
	first := true
	e.Runs(i, func(start, stride, n int) {
		for k := range n {
			buf = buf[:0]
			if !first {
				buf = append(buf, ' ')
			}
			first = false
			buf = strconv.AppendInt(buf, int64(start+k*stride), 10)
			w.Write(buf)
		}
	})
	w.WriteByte(']')
}
