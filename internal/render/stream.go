package render

import (
	"fmt"
	"io"
	"strconv"

	"github.com/mimoplan/mimoplan/internal/grid"

	"github.com/mimoplan/mimoplan/internal/safetext"
)

// flushAt is the size of the writes of the machine formats. Text is
// appended to one buffer and written whenever it passes flushAt, so that a
// number costs an append and a comparison, not a call through a writer.
const flushAt = 64 << 10

// out appends text to one buffer and writes it in flushAt-sized pieces.
// The first write error is kept and returned by close; nothing is written
// after it.
type out struct {
	w   io.Writer
	buf []byte
	err error
}

func newOut(w io.Writer) *out {
	return &out{w: w, buf: make([]byte, 0, flushAt+4<<10)}
}

// flush writes the buffer when it is full.
func (o *out) flush() {
	if len(o.buf) >= flushAt {
		o.write()
	}
}

func (o *out) write() {
	if o.err == nil && len(o.buf) > 0 {
		_, o.err = o.w.Write(o.buf)
	}
	o.buf = o.buf[:0]
}

// close writes what is left and returns the first write error.
func (o *out) close() error {
	o.write()
	return o.err
}

func (o *out) s(s string) {
	o.buf = append(o.buf, s...)
	o.flush()
}

func (o *out) int(v int) {
	o.buf = strconv.AppendInt(o.buf, int64(v), 10)
	o.flush()
}

func (o *out) f(format string, args ...any) {
	o.buf = fmt.Appendf(o.buf, format, args...)
	o.flush()
}

// quoted writes s as a JSON string, which is also a valid YAML scalar
// (safetext.JSONQuote: DEL and NEL escaped too).
func (o *out) quoted(s string) {
	o.buf = append(o.buf, safetext.JSONQuote(s)...)
	o.flush()
}

// members writes the members of group i of e separated by sep (a byte
// and, with space, a space after it), reading them from the enumeration's
// runs: no group is ever stored.
func (o *out) members(e grid.Enum, i int, sep byte, space bool) {
	if start, stride, n, ok := e.Run(i); ok {
		o.run(start, stride, n, sep, space, true)
		return
	}
	first := true
	e.Runs(i, func(start, stride, n int) {
		o.run(start, stride, n, sep, space, first)
		first = false
	})
}

// run writes start, start+stride, ..., n of them, each after sep unless
// first.
func (o *out) run(start, stride, n int, sep byte, space, first bool) {
	buf := o.buf
	if first {
		buf = strconv.AppendInt(buf, int64(start), 10)
		start += stride
		n--
	}
	for range n {
		if len(buf) >= flushAt {
			o.buf = buf
			o.write()
			buf = o.buf
		}
		buf = append(buf, sep)
		if space {
			buf = append(buf, ' ')
		}
		buf = strconv.AppendInt(buf, int64(start), 10)
		start += stride
	}
	o.buf = buf
	o.flush()
}

// group writes one group as [a,b,c].
func (o *out) group(e grid.Enum, i int, sep byte, space bool) {
	o.buf = append(o.buf, '[')
	o.members(e, i, sep, space)
	o.buf = append(o.buf, ']')
}

// enum writes every group of e as [[...],[...]], with ", " between
// members and groups when space (YAML's flow style) and "," otherwise.
func (o *out) enum(e grid.Enum, space bool) {
	o.buf = append(o.buf, "[["...)
	for i := range e.NumGroups() {
		if i > 0 {
			// Constant strings: appended without a call.
			if space {
				o.buf = append(o.buf, "], ["...)
			} else {
				o.buf = append(o.buf, "],["...)
			}
		}
		if start, _, n, ok := e.Run(i); ok && n == 1 { // a group of one
			o.buf = strconv.AppendInt(o.buf, int64(start), 10)
			o.flush()
			continue
		}
		o.members(e, i, ',', space)
	}
	o.buf = append(o.buf, "]]"...)
	o.flush()
}

// moduleSizes are the per-module fields of the JSON and YAML forms, in
// their documented order: grid.SizeFields, rank_offset first.
func moduleSizes(m *grid.Module) []sizeValue {
	fields := grid.SizeFields()
	fields[0], fields[1] = fields[1], fields[0] // num_ranks, rank_offset
	out := make([]sizeValue, len(fields))
	for i, f := range fields {
		out[i] = sizeValue{f.Name, f.Of(m)}
	}
	return out
}

// sizeValue is one of a module's sizes, named.
type sizeValue struct {
	key string
	val int
}
