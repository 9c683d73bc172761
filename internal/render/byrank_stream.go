package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// rankCursor walks one module's ranks in order, keeping each rank's
// coordinates as odometers over the base view [tp, gtp_remat, cp, dp, pp]
// and the expert view [expt_tp, ep, expt_gtp_remat, expt_dp, pp]: a row
// costs a few increments instead of nine divisions and two allocations.
type rankCursor struct {
	lo, hi int // the module's ranks [lo, hi)
	name   string
	index  int    // in the selection
	base   [5]int // coordinates; the first dim varies fastest
	expt   [5]int
	bshape [5]int
	eshape [5]int
}

func newRankCursor(m *grid.Module) *rankCursor {
	return &rankCursor{
		lo: m.RankOffset, hi: m.RankOffset + m.NumRanks, name: m.Name,
		bshape: [5]int{m.TP, m.GTPRemat, m.CP, m.DP, m.PP},
		eshape: [5]int{m.ExptTP, m.EP, m.ExptGTPRemat, m.ExptDP, m.PP},
	}
}

func (c *rankCursor) next() {
	step(&c.base, &c.bshape)
	step(&c.expt, &c.eshape)
}

func step(digit, shape *[5]int) {
	for d := range digit {
		digit[d]++
		if digit[d] < shape[d] {
			return
		}
		digit[d] = 0
	}
}

// values are the coordinates in byRankColumns order: the base view, then
// the expert view without its pp, which is the base view's.
func (c *rankCursor) values() [9]int {
	return [9]int{c.base[0], c.base[1], c.base[2], c.base[3], c.base[4], c.expt[0], c.expt[1], c.expt[2], c.expt[3]}
}

func (c *rankCursor) first() bool { return c.base[4] == 0 }
func (c *rankCursor) last() bool  { return c.base[4] == c.bshape[4]-1 }

// seek sets the cursor on the module's first rank at or after r.
func (c *rankCursor) seek(m *grid.Module, r int) {
	r = max(r, c.lo)
	if r >= c.hi {
		return
	}
	v := coordsOf(m, r).values
	copy(c.base[:], v[:5])
	copy(c.expt[:4], v[5:])
	c.expt[4] = v[4]
}

// byRankStream writes --by rank as JSON, YAML or CSV: one row per (rank,
// module) for the ranks [lo, hi), ranks in order and a colocated rank's
// modules in layout order. Each row ends with the index of its group of
// each of kinds (null, or an empty field, when no group of it holds the
// rank).
func byRankStream(w io.Writer, t *topo.Topology, sel selection, format string, header []string, lo, hi int, kinds []string) error {
	o := newOut(w)
	curs := make([]*rankCursor, len(sel.modules))
	for i, m := range sel.modules {
		curs[i] = newRankCursor(m)
		curs[i].seek(m, lo)
	}
	// groups appends the group columns of a row; pre and null are what
	// comes before each value and what stands for none.
	groups := func(m *grid.Module, r int, pre []string, null string) {
		for j, k := range kinds {
			o.buf = append(o.buf, pre[j]...)
			if v := groupIndex(m, k, r); v != "-" {
				o.buf = append(o.buf, v...)
			} else {
				o.buf = append(o.buf, null...)
			}
		}
	}
	pre := func(format string) []string {
		out := make([]string, len(kinds))
		for j, k := range kinds {
			out[j] = fmt.Sprintf(format, k+"_group")
		}
		return out
	}
	gpn := 0
	if _, _, ok := place(t, 0); ok {
		gpn = t.Cluster.GPUsPerNode
	}
	jsonKeys, yamlKeys, csvKeys := pre(`,"%s":`), pre(", %s: "), pre(",%.0s")
	for i, c := range curs {
		c.index = i
	}
	var row func(r, node, gpu int, c *rankCursor)
	switch format {
	case "json":
		o.s(`{"world_size":`)
		o.int(t.WorldSize)
		o.s(`,"ranks":[`)
		keys := make([]string, len(byRankColumns))
		for j, n := range byRankColumns {
			keys[j] = `,"` + n + `":`
		}
		modules := make([]string, len(curs))
		for i, c := range curs {
			b, _ := json.Marshal(c.name) // a string always marshals
			modules[i] = `"module":` + string(b)
		}
		sep := ""
		row = func(r, node, gpu int, c *rankCursor) {
			o.buf = append(o.buf, sep...)
			sep = ","
			o.buf = append(o.buf, `{"rank":`...)
			o.buf = strconv.AppendInt(o.buf, int64(r), 10)
			if gpn > 0 {
				o.buf = append(o.buf, `,"node":`...)
				o.buf = strconv.AppendInt(o.buf, int64(node), 10)
				o.buf = append(o.buf, `,"local_gpu":`...)
				o.buf = strconv.AppendInt(o.buf, int64(gpu), 10)
				o.buf = append(o.buf, ',')
			} else {
				o.buf = append(o.buf, `,"node":null,"local_gpu":null,`...)
			}
			o.buf = append(o.buf, modules[c.index]...)
			for j, v := range c.values() {
				o.buf = append(o.buf, keys[j]...)
				o.buf = strconv.AppendInt(o.buf, int64(v), 10)
			}
			o.buf = append(o.buf, `,"first_pp_stage":`...)
			o.buf = strconv.AppendBool(o.buf, c.first())
			o.buf = append(o.buf, `,"last_pp_stage":`...)
			o.buf = strconv.AppendBool(o.buf, c.last())
			groups(sel.modules[c.index], r, jsonKeys, "null")
			o.buf = append(o.buf, '}')
			o.flush()
		}
	case "yaml":
		o.s("world_size: ")
		o.int(t.WorldSize)
		o.s("\nranks:\n")
		keys := make([]string, len(byRankColumns))
		for j, n := range byRankColumns {
			keys[j] = ", " + n + ": "
		}
		row = func(r, node, gpu int, c *rankCursor) {
			o.buf = append(o.buf, "  - {rank: "...)
			o.buf = strconv.AppendInt(o.buf, int64(r), 10)
			if gpn > 0 {
				o.buf = append(o.buf, ", node: "...)
				o.buf = strconv.AppendInt(o.buf, int64(node), 10)
				o.buf = append(o.buf, ", local_gpu: "...)
				o.buf = strconv.AppendInt(o.buf, int64(gpu), 10)
			} else {
				o.buf = append(o.buf, ", node: null, local_gpu: null"...)
			}
			o.buf = append(o.buf, ", module: "...)
			o.buf = strconv.AppendQuote(o.buf, c.name) // a module may be named null or true
			for j, v := range c.values() {
				o.buf = append(o.buf, keys[j]...)
				o.buf = strconv.AppendInt(o.buf, int64(v), 10)
			}
			o.buf = append(o.buf, ", first_pp_stage: "...)
			o.buf = strconv.AppendBool(o.buf, c.first())
			o.buf = append(o.buf, ", last_pp_stage: "...)
			o.buf = strconv.AppendBool(o.buf, c.last())
			groups(sel.modules[c.index], r, yamlKeys, "null")
			o.buf = append(o.buf, "}\n"...)
			o.flush()
		}
	default: // csv
		o.s(strings.Join(header, ",") + "\n")
		row = func(r, node, gpu int, c *rankCursor) {
			o.buf = strconv.AppendInt(o.buf, int64(r), 10)
			o.buf = append(o.buf, ',')
			if gpn > 0 { // unknown placement is an empty field
				o.buf = strconv.AppendInt(o.buf, int64(node), 10)
				o.buf = append(o.buf, ',')
				o.buf = strconv.AppendInt(o.buf, int64(gpu), 10)
			} else {
				o.buf = append(o.buf, ',')
			}
			o.buf = append(o.buf, ',')
			o.buf = append(o.buf, c.name...)
			for _, v := range c.values() {
				o.buf = append(o.buf, ',')
				o.buf = strconv.AppendInt(o.buf, int64(v), 10)
			}
			o.buf = append(o.buf, ',')
			o.buf = strconv.AppendBool(o.buf, c.first())
			o.buf = append(o.buf, ',')
			o.buf = strconv.AppendBool(o.buf, c.last())
			groups(sel.modules[c.index], r, csvKeys, "")
			o.buf = append(o.buf, '\n')
			o.flush()
		}
	}
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
	if format == "json" {
		o.s("]}\n")
	}
	return o.close()
}
