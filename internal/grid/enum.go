package grid

import "slices"

// Enum is a rank enumeration: NumGroups groups of GroupSize ranks each.
// Member m of group i is offset + outer[i] + inner[m], which keeps even a
// 131,072-rank enumeration at O(groups + group size) memory.
type Enum struct {
	offset int
	outer  []int
	inner  []int
}

// NumGroups is the number of groups.
func (e Enum) NumGroups() int { return len(e.outer) }

// GroupSize is the number of ranks in each group.
func (e Enum) GroupSize() int { return len(e.inner) }

// Rank returns member m of group i.
func (e Enum) Rank(i, m int) int { return e.offset + e.outer[i] + e.inner[m] }

// AppendGroup appends the ranks of group i to dst.
func (e Enum) AppendGroup(dst []int, i int) []int {
	base := e.offset + e.outer[i]
	for _, o := range e.inner {
		dst = append(dst, base+o)
	}
	return dst
}

// Groups materialises the whole enumeration.
func (e Enum) Groups() [][]int {
	out := make([][]int, len(e.outer))
	flat := make([]int, 0, len(e.outer)*len(e.inner))
	for i := range e.outer {
		flat = e.AppendGroup(flat, i)
		out[i] = flat[len(flat)-len(e.inner):]
	}
	return out
}

// GroupOf returns the index of the group that holds rank, or -1.
func (e Enum) GroupOf(rank int) int {
	local := rank - e.offset
	for i, o := range e.outer {
		if slices.Contains(e.inner, local-o) {
			return i
		}
	}
	return -1
}

// Equal reports whether two enumerations list the same groups in the same
// order with the same member order.
func (e Enum) Equal(f Enum) bool {
	if e.NumGroups() != f.NumGroups() || e.GroupSize() != f.GroupSize() {
		return false
	}
	for i := range e.outer {
		for m := range e.inner {
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
	inner := []int{e.inner[0]}
	if last && len(e.inner) > 1 {
		inner = append(inner, e.inner[len(e.inner)-1])
	}
	return Enum{offset: e.offset, outer: e.outer, inner: inner}
}
