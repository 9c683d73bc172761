package grid

import "slices"

// axis is one digit of a mixed-radix rank number: it takes size values,
// each step adding stride to the local rank.
type axis struct{ size, stride int }

// Enum is a rank enumeration: NumGroups groups of GroupSize ranks each.
//
// It is computed, never stored: the group index is a mixed-radix number
// over the outer axes (the dims not asked for) and the member index one
// over the inner axes (the dims asked for), the earliest dim the fastest
// digit in both. Member m of group i is offset + value(outer, i) +
// value(inner, m). An enumeration of any size costs a few words, so a
// module of 2^24 ranks with its 22 group kinds costs no more than one of 8.
type Enum struct {
	offset int
	outer  []axis
	inner  []axis
	groups int // product of the outer sizes
	size   int // product of the inner sizes
	// pick, when not nil, keeps only these members (indices into the inner
	// enumeration), in this order: the embedding groups are the first and
	// last member of each pp group.
	pick []int
}

// newEnum builds an enumeration from its axes, earliest (fastest) first.
// Axes of size 1 are dropped and neighbours that are contiguous merged
// (stride of the next = stride*size of this one), which changes no rank
// but makes the representation canonical and the odometer short.
func newEnum(offset int, outer, inner []axis) Enum {
	e := Enum{offset: offset, outer: canonical(outer), inner: canonical(inner), groups: 1, size: 1}
	for _, a := range e.outer {
		e.groups *= a.size
	}
	for _, a := range e.inner {
		e.size *= a.size
	}
	return e
}

func canonical(axes []axis) []axis {
	out := make([]axis, 0, len(axes))
	for _, a := range axes {
		if a.size == 1 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].stride*out[n-1].size == a.stride {
			out[n-1].size *= a.size
			continue
		}
		out = append(out, a)
	}
	return out
}

// value is the local rank offset of digit number x over axes.
func value(axes []axis, x int) int {
	v := 0
	for _, a := range axes {
		v += x % a.size * a.stride
		x /= a.size
	}
	return v
}

// NumGroups is the number of groups.
func (e Enum) NumGroups() int { return e.groups }

// GroupSize is the number of ranks in each group.
func (e Enum) GroupSize() int {
	if e.pick != nil {
		return len(e.pick)
	}
	return e.size
}

// Rank returns member m of group i.
func (e Enum) Rank(i, m int) int {
	if e.pick != nil {
		m = e.pick[m]
	}
	return e.offset + value(e.outer, i) + value(e.inner, m)
}

// AppendGroup appends the ranks of group i to dst.
func (e Enum) AppendGroup(dst []int, i int) []int {
	base := e.offset + value(e.outer, i)
	if e.pick != nil {
		for _, m := range e.pick {
			dst = append(dst, base+value(e.inner, m))
		}
		return dst
	}
	if len(e.inner) == 1 { // the common case: a single, often merged, axis
		a := e.inner[0]
		for k := range a.size {
			dst = append(dst, base+k*a.stride)
		}
		return dst
	}
	od := axesOdometer(e.inner)
	for range e.size {
		dst = append(dst, base+od.Value())
		od.Next()
	}
	return dst
}

// Run returns group i as one run, start, start+stride, ..., n members,
// when it is one (no more than one inner axis, no pick); ok is false
// otherwise, and Runs lists it. It saves a call per group for the common
// case.
func (e Enum) Run(i int) (start, stride, n int, ok bool) {
	if e.pick != nil || len(e.inner) > 1 {
		return 0, 0, 0, false
	}
	start = e.offset + value(e.outer, i)
	if len(e.inner) == 0 {
		return start, 1, 1, true
	}
	return start, e.inner[0].stride, e.inner[0].size, true
}

// Runs calls run for the members of group i, in member order, as runs of
// evenly spaced ranks: start, start+stride, ..., n of them. The first
// inner axis is a run and an odometer over the others gives its starts,
// so a group of any size is listed without being stored: a caller that
// formats ranks reads them here rather than from AppendGroup.
func (e Enum) Runs(i int, run func(start, stride, n int)) {
	base := e.offset + value(e.outer, i)
	switch {
	case e.pick != nil:
		for _, m := range e.pick {
			run(base+value(e.inner, m), 1, 1)
		}
		return
	case len(e.inner) == 0: // a group of one
		run(base, 1, 1)
		return
	case len(e.inner) == 1:
		run(base, e.inner[0].stride, e.inner[0].size)
		return
	}
	first := e.inner[0]
	od := axesOdometer(e.inner[1:]) // the starts of the first axis's runs
	for range e.size / first.size {
		run(base+od.Value(), first.stride, first.size)
		od.Next()
	}
}

// Groups materialises the whole enumeration.
func (e Enum) Groups() [][]int {
	n := e.GroupSize()
	out := make([][]int, e.groups)
	flat := make([]int, 0, e.groups*n)
	for i := range e.groups {
		flat = e.AppendGroup(flat, i)
		out[i] = flat[len(flat)-n:]
	}
	return out
}

// GroupOf returns the index of the group that holds rank, or -1.
func (e Enum) GroupOf(rank int) int {
	i, _ := e.Locate(rank)
	return i
}

// Locate returns the group that holds rank and rank's index in it, or
// (-1, -1) when no group does. It takes time in the number of dims, not
// ranks: each axis's digit is read off the local rank.
func (e Enum) Locate(rank int) (group, member int) {
	local := rank - e.offset
	if local < 0 || local >= e.groups*e.size {
		return -1, -1
	}
	digits := func(axes []axis) (x int) {
		w := 1
		for _, a := range axes {
			x += local / a.stride % a.size * w
			w *= a.size
		}
		return x
	}
	group, member = digits(e.outer), digits(e.inner)
	if e.pick == nil {
		return group, member
	}
	for j, m := range e.pick {
		if m == member {
			return group, j
		}
	}
	return -1, -1
}

// Equal reports whether two enumerations list the same groups in the same
// order with the same member order.
func (e Enum) Equal(f Enum) bool {
	if e.NumGroups() != f.NumGroups() || e.GroupSize() != f.GroupSize() {
		return false
	}
	if e.offset == f.offset && slices.Equal(e.outer, f.outer) && slices.Equal(e.inner, f.inner) &&
		(e.pick == nil) == (f.pick == nil) && slices.Equal(e.pick, f.pick) {
		return true
	}
	for i := range e.NumGroups() {
		for m := range e.GroupSize() {
			if e.Rank(i, m) != f.Rank(i, m) {
				return false
			}
		}
	}
	return true
}

// Ends keeps the first and, when the group has more than one member, the
// last member of every group: Megatron's default_embedding_ranks applied to
// each pp group. With last false it keeps only the first member, as
// default_position_embedding_ranks does.
func (e Enum) Ends(last bool) Enum {
	first, final := 0, e.size-1
	if e.pick != nil {
		first, final = e.pick[0], e.pick[len(e.pick)-1]
	}
	out := e
	out.pick = []int{first}
	if last && final != first {
		out.pick = append(out.pick, final)
	}
	return out
}
