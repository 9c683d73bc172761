package render

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// rankCursor walks one module's ranks in order, keeping each rank's
// coordinates on two odometers, over the base view [tp, gtp_remat, cp,
// dp, pp] and the expert view [expt_tp, ep, expt_gtp_remat, expt_dp, pp]:
// a row costs a few increments instead of nine divisions and two
// allocations.
type rankCursor struct {
	m          *grid.Module
	lo, hi     int    // the module's ranks [lo, hi)
	name       string // quoted as the format quotes it
	base, expt grid.Odometer
}

func newRankCursor(m *grid.Module, name string) *rankCursor {
	return &rankCursor{
		m: m, lo: m.RankOffset, hi: m.RankOffset + m.NumRanks, name: name,
		base: grid.NewOdometer([]int{m.TP, m.GTPRemat, m.CP, m.DP, m.PP}, nil),
		expt: grid.NewOdometer([]int{m.ExptTP, m.EP, m.ExptGTPRemat, m.ExptDP, m.PP}, nil),
	}
}

func (c *rankCursor) next() {
	c.base.Next()
	c.expt.Next()
}

// values are the coordinates in byRankColumns order: the base view, then
// the expert view without its pp, which is the base view's.
func (c *rankCursor) values() [9]int {
	return [9]int{c.base.Digit(0), c.base.Digit(1), c.base.Digit(2), c.base.Digit(3), c.base.Digit(4),
		c.expt.Digit(0), c.expt.Digit(1), c.expt.Digit(2), c.expt.Digit(3)}
}

// seek sets the cursor on the module's first rank at or after r.
func (c *rankCursor) seek(r int) {
	r = max(r, c.lo)
	if r >= c.hi {
		return
	}
	v := coordsOf(c.m, r).values
	c.base.Set(v[:5])
	c.expt.Set([]int{v[5], v[6], v[7], v[8], v[4]})
}

// rowSyntax is how a --by rank format writes its rows: before each
// column's value its key (the first key opens the row), null for a value
// the row lacks, and the text around rows.
type rowSyntax struct {
	head, tail string   // before the first row, after the last
	keys       []string // one per column
	null       string
	end, sep   string // after each row, between two rows
	quote      func(name string) string
}

func syntaxOf(format string, worldSize int, header []string) rowSyntax {
	key := func(first, rest string) []string {
		keys := make([]string, len(header))
		for j, h := range header {
			if j == 0 {
				keys[j] = strings.ReplaceAll(first, "%", h)
			} else {
				keys[j] = strings.ReplaceAll(rest, "%", h)
			}
		}
		return keys
	}
	world := strconv.Itoa(worldSize)
	switch format {
	case "json":
		return rowSyntax{head: `{"world_size":` + world + `,"ranks":[`, tail: "]}\n", keys: key(`{"%":`, `,"%":`),
			null: "null", end: "}", sep: ",", quote: func(s string) string {
				b, _ := json.Marshal(s) // a string always marshals
				return string(b)
			}}
	case "yaml":
		// Quoted always: a module may be named null or true.
		return rowSyntax{head: "world_size: " + world + "\nranks:\n", keys: key("  - {%: ", ", %: "),
			null: "null", end: "}\n", quote: strconv.Quote}
	}
	return rowSyntax{head: strings.Join(header, ",") + "\n", keys: key("", ","), end: "\n",
		quote: func(s string) string { return s }}
}

// byRankStream writes --by rank as JSON, YAML or CSV: one row per (rank,
// module) for the ranks [lo, hi), ranks in order and a colocated rank's
// modules in layout order, with the columns of header: rank, node,
// local_gpu, module, the nine coordinates, first_pp_stage, last_pp_stage,
// then the index of the rank's group of each of kinds (null, or an empty
// field, when no group of it holds the rank, and for node and local_gpu
// without a cluster).
func byRankStream(w io.Writer, t *topo.Topology, sel selection, format string, header []string, lo, hi int, kinds []string) error {
	syn := syntaxOf(format, t.WorldSize, header)
	o := newOut(w)
	curs := make([]*rankCursor, len(sel.modules))
	for i, m := range sel.modules {
		curs[i] = newRankCursor(m, syn.quote(m.Name))
		curs[i].seek(lo)
	}
	gpn := 0
	if _, _, ok := place(t, 0); ok {
		gpn = t.Cluster.GPUsPerNode
	}
	keys, kindKeys := syn.keys[:15], syn.keys[15:]
	sep := ""
	row := func(r, node, gpu int, c *rankCursor) {
		o.buf = append(o.buf, sep...)
		sep = syn.sep
		o.buf = append(o.buf, keys[0]...)
		o.buf = strconv.AppendInt(o.buf, int64(r), 10)
		for j, v := range [2]int{node, gpu} {
			o.buf = append(o.buf, keys[1+j]...)
			if gpn > 0 {
				o.buf = strconv.AppendInt(o.buf, int64(v), 10)
			} else {
				o.buf = append(o.buf, syn.null...)
			}
		}
		o.buf = append(o.buf, keys[3]...)
		o.buf = append(o.buf, c.name...)
		for j, v := range c.values() {
			o.buf = append(o.buf, keys[4+j]...)
			o.buf = strconv.AppendInt(o.buf, int64(v), 10)
		}
		pp := c.base.Digit(4)
		o.buf = append(o.buf, keys[13]...)
		o.buf = strconv.AppendBool(o.buf, pp == 0)
		o.buf = append(o.buf, keys[14]...)
		o.buf = strconv.AppendBool(o.buf, pp == c.m.PP-1)
		for j, k := range kinds {
			o.buf = append(o.buf, kindKeys[j]...)
			if v := groupIndex(c.m, k, r); v != "-" {
				o.buf = append(o.buf, v...)
			} else {
				o.buf = append(o.buf, syn.null...)
			}
		}
		o.buf = append(o.buf, syn.end...)
		o.flush()
	}
	o.s(syn.head)
	node, gpu := 0, lo
	if gpn > 0 {
		node, gpu = lo/gpn, lo%gpn
	}
	for r := lo; r < hi; r++ {
		for _, c := range curs {
			if r >= c.lo && r < c.hi {
				row(r, node, gpu, c)
				c.next()
			}
		}
		if gpu++; gpu == gpn {
			gpu, node = 0, node+1
		}
	}
	o.s(syn.tail)
	return o.close()
}
