package render

import (
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// kindRow is one row of a folded table: group kinds whose groups are the
// same, listed together (dp = dp_cp = dp_cp_gtp_remat).
type kindRow struct {
	names []string
	e     grid.Enum
}

// foldKinds merges kinds with identical groups into one row and, unless
// all, takes the kinds whose groups are all single ranks out of the rows:
// they say nothing but "this dim has size 1" and are listed on one line.
func foldKinds(groups []grid.Group, all bool) (rows []kindRow, singletons []string) {
	for _, g := range groups {
		if all {
			rows = append(rows, kindRow{names: []string{g.Kind}, e: g.Enum})
			continue
		}
		if g.Enum.GroupSize() == 1 {
			singletons = append(singletons, g.Kind)
			continue
		}
		merged := false
		for i := range rows {
			if rows[i].e.Equal(g.Enum) {
				rows[i].names = append(rows[i].names, g.Kind)
				merged = true
				break
			}
		}
		if !merged {
			rows = append(rows, kindRow{names: []string{g.Kind}, e: g.Enum})
		}
	}
	return rows, singletons
}

// nodeSpan is the fewest and the most nodes one group of e spans. Groups
// are translates of each other, and a translate by a whole node spans as
// many nodes, so only one group per distinct first rank modulo gpn is
// counted: at most gpn groups, whatever the world.
func nodeSpan(e grid.Enum, gpn int) (lo, hi int) {
	seen := make(map[int]bool, gpn)
	lo = -1
	for i := range e.NumGroups() {
		key := e.Rank(i, 0) % gpn
		if seen[key] {
			continue
		}
		seen[key] = true
		n := groupNodes(e, i, gpn)
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
		if len(seen) == gpn {
			break
		}
	}
	return lo, hi
}

// groupNodes counts the nodes group i of e spans without listing it: by
// counting node changes when its members ascend (the usual case), else
// with a bit per node between its first and last.
func groupNodes(e grid.Enum, i, gpn int) int {
	n, last, ascending := 0, -1, true
	lo, hi := -1, -1
	for j := range e.GroupSize() {
		node := e.Rank(i, j) / gpn
		if lo < 0 || node < lo {
			lo = node
		}
		hi = max(hi, node)
		if node < last {
			ascending = false
		}
		if node != last {
			n++
			last = node
		}
	}
	if ascending {
		return n
	}
	bits := make([]uint64, (hi-lo)/64+1)
	n = 0
	for j := range e.GroupSize() {
		b := e.Rank(i, j)/gpn - lo
		if bits[b/64]&(1<<(b%64)) == 0 {
			bits[b/64] |= 1 << (b % 64)
			n++
		}
	}
	return n
}

// spanText is a node span for a table cell: "1", or "1-2" when groups
// differ.
func spanText(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return strconv.Itoa(lo) + "-" + strconv.Itoa(hi)
}

// groupText is one group, short: every member when there are at most
// four, otherwise the first members and the last, with the stride when the
// members are evenly spaced: [16384-16391] for a contiguous run, [16384
// 16400 ... 24560] step 16 for a strided one.
func groupText(e grid.Enum, i int) string {
	text, step := groupShort(e, i)
	if step > 1 {
		text += " step " + strconv.Itoa(step)
	}
	return text
}

// groupShort is groupText without the stride, and the stride when the
// group is shortened and evenly spaced (0 otherwise). The groups of one
// enumeration share it.
func groupShort(e grid.Enum, i int) (string, int) {
	n := e.GroupSize()
	first := e.Rank(i, 0)
	if n <= 4 {
		var b strings.Builder
		b.WriteByte('[')
		for j := range n {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(e.Rank(i, j)))
		}
		b.WriteByte(']')
		return b.String(), 0
	}
	last := e.Rank(i, n-1)
	_, step, _, even := e.Run(i)
	switch {
	case even && step == 1:
		return "[" + strconv.Itoa(first) + "-" + strconv.Itoa(last) + "]", 1
	case even:
		return "[" + strconv.Itoa(first) + " " + strconv.Itoa(first+step) + " ... " + strconv.Itoa(last) + "]", step
	}
	return "[" + strconv.Itoa(first) + " " + strconv.Itoa(e.Rank(i, 1)) + " " + strconv.Itoa(e.Rank(i, 2)) + " ... " + strconv.Itoa(last) + "]", 0
}

// groupsText is a ranks cell of at most width characters when it can be:
// every group when all fit, else the first groups and the last around
// "...", else the first group and "...". A stride the groups share is
// said once, at the end ("step 16"). The number of groups is in a column
// of its own.
func groupsText(e grid.Enum, width int) string {
	n := e.NumGroups()
	_, step := groupShort(e, 0)
	tail := ""
	if step > 1 {
		tail = " step " + strconv.Itoa(step)
		width -= len(tail)
	}
	var all []string
	total := -1
	for i := range min(n, 16) {
		g, _ := groupShort(e, i)
		all = append(all, g)
		total += len(g) + 1
	}
	if n <= 16 && total <= width {
		return strings.Join(all, " ") + tail
	}
	last, _ := groupShort(e, n-1)
	head := all[0]
	if len(head)+5+len(last) > width {
		return head + " ..." + tail
	}
	for _, g := range all[1 : len(all)-1] {
		if len(head)+1+len(g)+5+len(last) > width {
			break
		}
		head += " " + g
	}
	return head + " ... " + last + tail
}

// wantedWidth is how wide a ranks cell would like to be: the first group,
// "..." and the last, and the stride.
func wantedWidth(e grid.Enum) int {
	n := e.NumGroups()
	first, step := groupShort(e, 0)
	w := len(first)
	if n > 1 {
		last, _ := groupShort(e, n-1)
		w += 5 + len(last)
	}
	if step > 1 {
		w += len(" step ") + len(strconv.Itoa(step))
	}
	return w
}

// wrap packs pieces, joined by sep, into lines of at most width
// characters; a piece longer than a line is cut at its spaces.
func wrap(pieces []string, sep string, width int) []string {
	var lines []string
	cur := ""
	mark := len(strings.TrimRight(sep, " ")) // what ends a line that goes on
	for i, p := range pieces {
		room := width
		if i < len(pieces)-1 {
			room -= mark
		}
		switch {
		case cur == "":
			cur = p
		case len(cur)+len(sep)+len(p) <= room:
			cur += sep + p
		default:
			lines = append(lines, strings.TrimRight(cur+sep, " "))
			cur = p
		}
		for len(cur) > width {
			head, rest := cut(cur, width)
			if rest == "" {
				break
			}
			lines = append(lines, head)
			cur = rest
		}
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}

// hasExperts tells whether a module has experts: num_experts set, or an
// expert view that is more than a relabelling of its ranks. A dense
// module's header and coordinates leave the expert view out.
func hasExperts(t *topo.Topology, m *grid.Module) bool {
	if m.EP > 1 || m.ExptTP > 1 || m.ExptGTPRemat > 1 {
		return true
	}
	if t.Layout != nil { // num_experts, given or from the module's model
		for _, lm := range t.Layout.Modules {
			if lm.Name == m.Name {
				return lm.NumExperts > 0
			}
		}
	}
	return false
}
