package render

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func renderGroups(w *bufio.Writer, t *validate.Topology, sel selection, o Options) error {
	out := newOut(w)
	switch o.Format {
	case "json":
		groupsJSON(out, t, sel)
	case "yaml":
		groupsYAML(out, t, sel)
	case "csv":
		groupsCSV(out, sel)
	default:
		return groupsTable(w, t, sel, o)
	}
	return out.close()
}

func groupsJSON(o *out, t *validate.Topology, sel selection) {
	o.s(`{"version":1,"name":`)
	o.quoted(t.Name)
	o.s(`,"world_size":`)
	o.int(t.WorldSize)
	o.s(`,"mode":"`)
	o.s(string(t.Mode))
	o.s(`","modules":[`)
	for i, m := range sel.modules {
		if i > 0 {
			o.s(",")
		}
		o.s(`{"name":`)
		o.quoted(m.Name)
		for _, f := range moduleSizes(m) {
			o.s(`,"`)
			o.s(f.key)
			o.s(`":`)
			o.int(f.val)
		}
		o.s(`,"groups":{`)
		for j, g := range sel.groups(m) {
			if j > 0 {
				o.s(",")
			}
			o.s(`"`)
			o.s(g.Kind)
			o.s(`":`)
			o.enum(g.Enum, ',', false)
		}
		o.s("}}")
	}
	o.s("]}\n")
}

func groupsYAML(o *out, t *validate.Topology, sel selection) {
	o.s("version: 1\nname: ")
	o.quoted(t.Name)
	o.s("\nworld_size: ")
	o.int(t.WorldSize)
	o.s("\nmode: ")
	o.s(string(t.Mode))
	o.s("\nmodules:\n")
	for _, m := range sel.modules {
		o.s("  - name: ")
		o.quoted(m.Name)
		o.s("\n")
		for _, f := range moduleSizes(m) {
			o.s("    ")
			o.s(f.key)
			o.s(": ")
			o.int(f.val)
			o.s("\n")
		}
		gs := sel.groups(m)
		if len(gs) == 0 {
			o.s("    groups: {}\n")
			continue
		}
		o.s("    groups:\n")
		for _, g := range gs {
			o.s("      ")
			o.s(g.Kind)
			o.s(": ")
			o.enum(g.Enum, ',', true)
			o.s("\n")
		}
	}
}

func groupsCSV(o *out, sel selection) {
	o.s("module,group,index,size,ranks\n")
	for _, m := range sel.modules {
		for _, g := range sel.groups(m) {
			// Each row starts with "module,kind," and ends with a newline.
			prefix := m.Name + "," + g.Kind + ","
			size := g.Enum.GroupSize()
			for i := range g.Enum.NumGroups() {
				o.buf = append(o.buf, prefix...)
				o.buf = strconv.AppendInt(o.buf, int64(i), 10)
				o.buf = append(o.buf, ',')
				o.buf = strconv.AppendInt(o.buf, int64(size), 10)
				o.buf = append(o.buf, ',')
				o.members(g.Enum, i, ' ', false)
				o.buf = append(o.buf, '\n')
			}
		}
	}
}

// Folding limits for tables: members shown of a long group, and the width
// of the ranks cell before the remaining groups are only counted.
const (
	foldMembers = 6
	foldWidth   = 64
)

func groupsTable(w *bufio.Writer, t *validate.Topology, sel selection, o Options) error {
	fmt.Fprintf(w, "%s: %d ranks, %s, %d modules\n", title(t), t.WorldSize, t.Mode, len(t.Modules))
	for _, m := range sel.modules {
		fmt.Fprintf(w, "\n%s  ranks [%d, %d)  %s\n", m.Name, m.RankOffset, m.RankOffset+m.NumRanks, sizes(m))
		if o.Full {
			if err := fullGroupsTable(w, o.Format, sel.groups(m)); err != nil {
				return err
			}
			continue
		}
		tb := newTable(w, o.Format)
		tb.Header("group", "groups", "size", "ranks")
		for _, g := range sel.groups(m) {
			if err := tb.Append(g.Kind, strconv.Itoa(g.Enum.NumGroups()), strconv.Itoa(g.Enum.GroupSize()), folded(g.Enum)); err != nil {
				return err
			}
		}
		if err := tb.Render(); err != nil {
			return err
		}
	}
	return nil
}

// fullGroupsTable streams one row per group, long groups over several rows.
func fullGroupsTable(w io.Writer, format string, groups []grid.Group) error {
	widths := []int{0, 0, 0, 0}
	for _, g := range groups {
		widths[0] = max(widths[0], len(g.Kind))
		widths[1] = max(widths[1], digits(g.Enum.NumGroups()-1))
		widths[2] = max(widths[2], digits(g.Enum.GroupSize()))
		widths[3] = max(widths[3], longestGroup(g.Enum, wrapWidth))
	}
	widths[3] = wrappedWidth(widths[3])
	tb, err := newStreamTable(w, format, []string{"group", "index", "size", "ranks"}, widths)
	if err != nil {
		return err
	}
	for _, g := range groups {
		for i := range g.Enum.NumGroups() {
			if err := tb.row(g.Kind, strconv.Itoa(i), strconv.Itoa(g.Enum.GroupSize()), members(g.Enum, i, true)); err != nil {
				return err
			}
		}
	}
	return tb.close()
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

// title is the layout's name for a table heading; a name with characters
// a terminal would act on (a newline, an escape) is shown quoted.
func title(t *validate.Topology) string {
	switch {
	case t.Name == "":
		return "layout"
	case strings.IndexFunc(t.Name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return strconv.Quote(t.Name)
	}
	return t.Name
}

// sizes summarises a module's parallel sizes, leaving out those at 1.
func sizes(m *grid.Module) string {
	var parts []string
	for _, f := range moduleSizes(m)[2:] {
		if f.val != 1 || f.key == "dp" || f.key == "tp" {
			parts = append(parts, fmt.Sprintf("%s=%d", f.key, f.val))
		}
	}
	return strings.Join(parts, " ")
}

// members formats one group; unless full, a long group shows its first
// members and its last.
func members(e grid.Enum, i int, full bool) string {
	n := e.GroupSize()
	var b strings.Builder
	b.WriteByte('[')
	for j := range n {
		if j > 0 {
			b.WriteByte(' ')
		}
		if !full && n > foldMembers+1 && j == foldMembers-1 {
			fmt.Fprintf(&b, "... %d (%d ranks)", e.Rank(i, n-1), n)
			break
		}
		b.WriteString(strconv.Itoa(e.Rank(i, j)))
	}
	b.WriteByte(']')
	return b.String()
}

// folded shows the first groups of an enumeration, as many as fit in
// foldWidth characters (at least one), and counts the rest.
func folded(e grid.Enum) string {
	var b strings.Builder
	shown := 0
	for i := range e.NumGroups() {
		g := members(e, i, false)
		if shown > 0 && b.Len()+1+len(g) > foldWidth {
			break
		}
		if shown > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g)
		shown++
	}
	if rest := e.NumGroups() - shown; rest > 0 {
		fmt.Fprintf(&b, " ... and %d more", rest)
	}
	return b.String()
}
