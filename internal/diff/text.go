package diff

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/mimoplan/mimoplan/internal/english"

	"github.com/mimoplan/mimoplan/internal/safetext"
)

// WriteText prints the report for people, lines at most width wide where
// the words allow (0: 80).
func (r *Report) WriteText(w io.Writer, width int) error {
	if width <= 0 {
		width = 80
	}
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "--- %s\n+++ %s\n", safetext.Text(r.A), safetext.Text(r.B))
	var world []string
	if r.WorldSize.Changed() {
		world = append(world, fmt.Sprintf("world_size %d -> %d", r.WorldSize.A, r.WorldSize.B))
	}
	if r.Mode.Changed() {
		world = append(world, fmt.Sprintf("mode %s -> %s", r.Mode.A, r.Mode.B))
	}
	if r.GPUs.Changed() {
		world = append(world, fmt.Sprintf("gpus_per_node %s -> %s", orNone(r.GPUs.A), orNone(r.GPUs.B)))
	}
	if r.Target.Changed() {
		world = append(world, fmt.Sprintf("target %s -> %s", r.Target.A, r.Target.B))
	}
	if len(world) == 0 {
		world = []string{fmt.Sprintf("%d ranks, %s (unchanged)", r.WorldSize.A, r.Mode.A)}
	}
	lines(b, "world: "+strings.Join(world, ", "), "  ", width)

	for _, m := range r.Modules {
		b.WriteByte('\n')
		switch m.Status {
		case "added":
			fmt.Fprintf(b, "%s: added, ranks %s\n", m.Name, m.Span.B)
			continue
		case "removed":
			fmt.Fprintf(b, "%s: removed (was ranks %s)\n", m.Name, m.Span.A)
			continue
		}
		where := "ranks " + m.Span.A
		if m.Span.Changed() {
			where = "ranks " + m.Span.A + " -> " + m.Span.B
		}
		fmt.Fprintf(b, "%s: %s, %s\n", m.Name, m.Status, where)
		if len(m.Sizes) > 0 {
			var parts []string
			for _, s := range m.Sizes {
				parts = append(parts, fmt.Sprintf("%s %d -> %d", s.Name, s.A, s.B))
			}
			label := "sizes:"
			for _, l := range wrapWords(parts, ", ", width-10) {
				fmt.Fprintf(b, "  %s %s\n", label, l)
				label = "      "
			}
		}
		if len(m.Groups) > 0 {
			groupTable(b, m.Groups, width)
		}
		if len(m.Same) > 0 && len(m.Groups) > 0 {
			lines(b, "  same groups: "+strings.Join(m.Same, " "), "    ", width)
		}
	}

	b.WriteByte('\n')
	rk := r.Ranks
	fmt.Fprintf(b, "ranks: %d change module, %d change node, %d change pipeline stage\n", rk.ModuleChanged, rk.NodeChanged, rk.StageChanged)
	for _, e := range rk.Examples {
		var parts []string
		if e.Modules.Changed() {
			parts = append(parts, fmt.Sprintf("module %s -> %s", orDash(e.Modules.A), orDash(e.Modules.B)))
		}
		if e.Node.Changed() && e.Node.A >= 0 && e.Node.B >= 0 {
			parts = append(parts, fmt.Sprintf("node %d -> %d", e.Node.A, e.Node.B))
		}
		for _, name := range sortedKeys(e.Stages) {
			st := e.Stages[name]
			parts = append(parts, fmt.Sprintf("%s stage %s -> %s", name, st.A, st.B))
		}
		lines(b, fmt.Sprintf("  rank %d: %s", e.Rank, strings.Join(parts, ", ")), "    ", width)
	}
	if n := max(rk.ModuleChanged, rk.NodeChanged, rk.StageChanged); n > len(rk.Examples) && len(rk.Examples) > 0 {
		fmt.Fprintf(b, "  (the first %d of the ranks that change)\n", len(rk.Examples))
	}

	bt := r.Batch
	if bt.Changed() {
		var parts []string
		if bt.MicroBatchSize.Changed() {
			parts = append(parts, fmt.Sprintf("micro_batch_size %s -> %s", orNone(bt.MicroBatchSize.A), orNone(bt.MicroBatchSize.B)))
		}
		if bt.GlobalBatchSize.Changed() {
			parts = append(parts, fmt.Sprintf("global_batch_size %s -> %s", orNone(bt.GlobalBatchSize.A), orNone(bt.GlobalBatchSize.B)))
		}
		if len(parts) == 0 {
			parts = []string{"settings unchanged"}
		}
		lines(b, "batch: "+strings.Join(parts, ", "), "  ", width)
		for _, n := range bt.Removed {
			lines(b, "  - "+n, "    ", width)
		}
		for _, n := range bt.Added {
			lines(b, "  + "+n, "    ", width)
		}
	} else {
		b.WriteString("batch: unchanged\n")
	}

	b.WriteByte('\n')
	b.WriteString(r.Verdict() + "\n")
	return b.Flush()
}

// Verdict is the report's last line: whether the groups are identical.
func (r *Report) Verdict() string {
	if r.Identical {
		return "groups identical: every module has the same groups of every kind"
	}
	var changed, kinds, added, removed int
	for _, m := range r.Modules {
		switch m.Status {
		case "added":
			added++
		case "removed":
			removed++
		default:
			if len(m.Groups) > 0 {
				changed++
				kinds += len(m.Groups)
			}
		}
	}
	var parts []string
	if changed > 0 {
		parts = append(parts, fmt.Sprintf("%s change in %s", english.Plural(kinds, "group kind"), english.Plural(changed, "module")))
	}
	if added > 0 {
		parts = append(parts, english.Plural(added, "module")+" added")
	}
	if removed > 0 {
		parts = append(parts, english.Plural(removed, "module")+" removed")
	}
	return "groups differ: " + strings.Join(parts, ", ")
}

func shape(groups, size int) string {
	if groups == 0 {
		return "-"
	}
	return fmt.Sprintf("%d x %d", groups, size)
}

func orNone(v int) string {
	if v == 0 {
		return "none"
	}
	return itoa(v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// groupTable lists the kinds whose groups change, kinds with the same
// groups on both sides on one row (tp = tp_cp = mp), as groups x size on
// each side and the ranks that move.
func groupTable(b *bufio.Writer, gs []GroupChange, width int) {
	type row struct {
		kinds []string
		g     GroupChange
	}
	var rows []row
	for _, g := range gs {
		if g.SameAs == "" {
			rows = append(rows, row{[]string{g.Kind}, g})
			continue
		}
		for i := range rows {
			if rows[i].kinds[0] == g.SameAs {
				rows[i].kinds = append(rows[i].kinds, g.Kind)
			}
		}
	}
	cells := make([][4]string, len(rows))
	w := [4]int{len("groups"), len("a"), len("b"), len("ranks moved")}
	for i, r := range rows {
		cells[i] = [4]string{strings.Join(r.kinds, " = "), shape(r.g.Groups.A, r.g.Size.A), shape(r.g.Groups.B, r.g.Size.B), itoa(r.g.RanksMoved)}
		for j := 1; j < 4; j++ {
			w[j] = max(w[j], len(cells[i][j]))
		}
	}
	w[0] = max(w[0], width-2-w[1]-w[2]-w[3]-6)
	for _, r := range rows {
		for _, k := range r.kinds {
			w[0] = max(w[0], len(k)+4)
		}
	}
	fmt.Fprintf(b, "  %-*s  %-*s  %-*s  %s\n", w[0], "groups that change", w[1], "a", w[2], "b", "ranks moved")
	for i, r := range rows {
		names := wrapWords(r.kinds, " = ", w[0]-2)
		for j, line := range names {
			if j == 0 {
				fmt.Fprintf(b, "  %-*s  %-*s  %-*s  %*s\n", w[0], line, w[1], cells[i][1], w[2], cells[i][2], len("ranks moved"), cells[i][3])
			} else {
				fmt.Fprintf(b, "    %s\n", line)
			}
		}
	}
}

// wrapWords joins words with sep into lines of at most width; a line that
// goes on ends with sep less its trailing space (" =", ",").
func wrapWords(words []string, sep string, width int) []string {
	mark := strings.TrimRight(sep, " ")
	var out []string
	cur := ""
	for i, wd := range words {
		room := width
		if i < len(words)-1 {
			room -= len(mark)
		}
		if cur != "" && len(cur)+len(sep)+len(wd) > room {
			out = append(out, cur+mark)
			cur = wd
			continue
		}
		if cur != "" {
			cur += sep
		}
		cur += wd
	}
	return append(out, cur)
}

// lines writes text cut at spaces into lines of at most width, the
// continuation lines after indent.
func lines(b *bufio.Writer, text, indent string, width int) {
	for first := true; ; first = false {
		if !first {
			text = indent + text
		}
		if len(text) <= width {
			b.WriteString(text + "\n")
			return
		}
		cut := strings.LastIndexByte(text[:width+1], ' ')
		if cut <= len(indent) {
			b.WriteString(text + "\n")
			return
		}
		b.WriteString(text[:cut] + "\n")
		text = text[cut+1:]
	}
}
