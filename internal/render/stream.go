package render

import (
	"bufio"
	"encoding/json"
	"strconv"

	"github.com/mimoplan/mimoplan/internal/grid"
)

// out is a buffered writer with a scratch buffer for numbers. Errors are
// sticky in bufio.Writer, so only the final Flush needs checking.
type out struct {
	w       *bufio.Writer
	scratch []byte
	ranks   []int
}

func newOut(w *bufio.Writer) *out { return &out{w: w, scratch: make([]byte, 0, 32)} }

func (o *out) s(s string) { o.w.WriteString(s) }

func (o *out) int(v int) {
	o.scratch = strconv.AppendInt(o.scratch[:0], int64(v), 10)
	o.w.Write(o.scratch)
}

// quoted writes s as a JSON string, which is also a valid YAML scalar.
func (o *out) quoted(s string) {
	b, _ := json.Marshal(s) // a string always marshals
	o.w.Write(b)
}

// group writes one group as [a,b,c], with sep between members.
func (o *out) group(e grid.Enum, i int, sep string) {
	o.ranks = e.AppendGroup(o.ranks[:0], i)
	o.w.WriteByte('[')
	for j, r := range o.ranks {
		if j > 0 {
			o.s(sep)
		}
		o.int(r)
	}
	o.w.WriteByte(']')
}

// enum writes every group of e as [[...],[...]].
func (o *out) enum(e grid.Enum, sep string) {
	o.w.WriteByte('[')
	for i := range e.NumGroups() {
		if i > 0 {
			o.s(sep)
		}
		o.group(e, i, sep)
	}
	o.w.WriteByte(']')
}

// moduleSizes are the per-module fields of the JSON and YAML forms, in
// their documented order.
func moduleSizes(m *grid.Module) []struct {
	key string
	val int
} {
	return []struct {
		key string
		val int
	}{
		{"rank_offset", m.RankOffset}, {"num_ranks", m.NumRanks},
		{"tp", m.TP}, {"gtp_remat", m.GTPRemat}, {"cp", m.CP}, {"pp", m.PP}, {"dp", m.DP},
		{"ep", m.EP}, {"expt_tp", m.ExptTP}, {"expt_gtp_remat", m.ExptGTPRemat}, {"expt_dp", m.ExptDP},
	}
}
