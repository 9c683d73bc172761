// Package limit is the yardstick of docs/performance.md: the
// format-and-write limit of render's machine formats. It writes the
// integers that `mimoplan render` writes, in the same order, and nothing
// else: each formatted with strconv.AppendInt and followed by one
// separator byte in a 64 KiB buffer that is written whenever it fills. A
// renderer can only be slower, since it writes the same numbers and the
// brackets, keys and names around them as well.
//
// The numbers come from the cheapest sources there are: group members from
// grid.Enum.Run and Runs (one addition each), --by rank coordinates from
// odometers (one increment each).
package limit

import (
	"fmt"
	"io"
	"strconv"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
)

const flushAt = 64 << 10

type writer struct {
	w   io.Writer
	buf []byte
	n   int64
	err error
}

func (l *writer) write() {
	if l.err == nil && len(l.buf) > 0 {
		_, l.err = l.w.Write(l.buf)
		l.n += int64(len(l.buf))
	}
	l.buf = l.buf[:0]
}

func (l *writer) int(v int) {
	l.buf = strconv.AppendInt(l.buf, int64(v), 10)
	l.buf = append(l.buf, ' ')
	if len(l.buf) >= flushAt {
		l.write()
	}
}

// run writes start, start+stride, ..., n of them.
func (l *writer) run(start, stride, n int) {
	buf := l.buf
	for range n {
		buf = strconv.AppendInt(buf, int64(start), 10)
		buf = append(buf, ' ')
		start += stride
		if len(buf) >= flushAt {
			l.buf = buf
			l.write()
			buf = l.buf
		}
	}
	l.buf = buf
}

// Write writes the integers of `mimoplan render --format FORMAT` of the
// whole topology (FORMAT json, yaml or csv), or of `--by rank` with
// byRank, and returns the bytes written.
func Write(w io.Writer, t *topo.Topology, format string, byRank bool) (int64, error) {
	l := &writer{w: w, buf: make([]byte, 0, flushAt+64)}
	switch {
	case format != "json" && format != "yaml" && format != "csv":
		return 0, fmt.Errorf("no limit for format %q", format)
	}
	if format != "csv" {
		l.int(t.WorldSize)
	}
	if byRank {
		ranks(l, t)
	} else {
		groups(l, t, format == "csv")
	}
	l.write()
	return l.n, l.err
}

// groups: every member of every group; csv rows also carry the group's
// index and size.
func groups(l *writer, t *topo.Topology, csv bool) {
	for _, m := range t.Modules {
		if !csv {
			for _, v := range []int{m.RankOffset, m.NumRanks, m.TP, m.GTPRemat, m.CP, m.PP, m.DP, m.EP, m.ExptTP, m.ExptGTPRemat, m.ExptDP} {
				l.int(v)
			}
		}
		for _, g := range m.Groups {
			for i := range g.Enum.NumGroups() {
				if csv {
					l.int(i)
					l.int(g.Enum.GroupSize())
				}
				if start, stride, n, ok := g.Enum.Run(i); ok {
					l.run(start, stride, n)
				} else {
					g.Enum.Runs(i, l.run)
				}
			}
		}
	}
}

// ranks: per (rank, module) row the rank, its node and local GPU (when the
// cluster is known) and nine coordinates.
func ranks(l *writer, t *topo.Topology) {
	gpn := 0
	if t.Cluster != nil {
		gpn = t.Cluster.GPUsPerNode
	}
	type cursor struct {
		lo, hi     int
		base, expt grid.Odometer
	}
	var cs []*cursor
	for _, m := range t.Modules {
		cs = append(cs, &cursor{lo: m.RankOffset, hi: m.RankOffset + m.NumRanks,
			base: grid.NewOdometer([]int{m.TP, m.GTPRemat, m.CP, m.DP, m.PP}, nil),
			// pp, the expert view's fifth dim, is the base view's.
			expt: grid.NewOdometer([]int{m.ExptTP, m.EP, m.ExptGTPRemat, m.ExptDP}, nil)})
	}
	node, gpu := 0, 0
	for r := range t.WorldSize {
		for _, c := range cs {
			if r < c.lo || r >= c.hi {
				continue
			}
			l.int(r)
			if gpn > 0 {
				l.int(node)
				l.int(gpu)
			}
			for d := range 5 {
				l.int(c.base.Digit(d))
			}
			for d := range 4 {
				l.int(c.expt.Digit(d))
			}
			c.base.Next()
			c.expt.Next()
		}
		if gpu++; gpu == gpn {
			gpu, node = 0, node+1
		}
	}
}
