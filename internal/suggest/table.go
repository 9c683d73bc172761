package suggest

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/mimoplan/mimoplan/internal/plan"
)

// printTable prints one row per module of each candidate, best
// candidate first, with the step time and its parts, within width columns
// (0: any): past it the parts give way to a narrower table, and past that
// to a block of lines per candidate.
func printTable(w io.Writer, cs []plan.Candidate, width int) error {
	for _, layout := range []func(io.Writer, []plan.Candidate) error{fullTable, narrowTable} {
		var b bytes.Buffer
		if err := layout(&b, cs); err != nil {
			return err
		}
		if width <= 0 || widest(b.String()) <= width {
			_, err := w.Write(b.Bytes())
			return err
		}
	}
	return printLines(w, cs)
}

func fullTable(w io.Writer, cs []plan.Candidate) error {
	return table(w, []string{"#", "step s", "module", "ranks", "sizes", "time s", "compute", "bubble", "comm", "idle", "memory", "headroom"}, cs,
		func(m *plan.Choice, p *plan.ModuleTime) []string {
			comm := p.TP + p.CP + p.EP + p.PP + p.DP
			return []string{m.Name, fmt.Sprintf("[%d,%d)", m.RankOffset, m.RankOffset+m.NumRanks), sizesText(m),
				fmt.Sprintf("%.3f", p.Total), fmt.Sprintf("%.3f", p.Compute), fmt.Sprintf("%.3f", p.Bubble), fmt.Sprintf("%.3f", comm),
				fmt.Sprintf("%.0f%%", 100*p.Idle), bytesText(p.MemoryBytes), bytesText(p.HeadroomBytes)}
		})
}

func narrowTable(w io.Writer, cs []plan.Candidate) error {
	return table(w, []string{"#", "step s", "module", "ranks", "sizes", "time s", "idle", "free"}, cs,
		func(m *plan.Choice, p *plan.ModuleTime) []string {
			return []string{m.Name, fmt.Sprintf("[%d,%d)", m.RankOffset, m.RankOffset+m.NumRanks), sizesText(m),
				fmt.Sprintf("%.3f", p.Total), fmt.Sprintf("%.0f%%", 100*p.Idle), bytesText(p.HeadroomBytes)}
		})
}

// table writes header and a row per module: the candidate's rank and step
// on its first module's row, then row's cells.
func table(w io.Writer, header []string, cs []plan.Candidate, row func(*plan.Choice, *plan.ModuleTime) []string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithRowAlignment(tw.AlignLeft))
	hs := make([]any, len(header))
	for i, h := range header {
		hs[i] = h
	}
	t.Header(hs...)
	for i, c := range cs {
		for j := range c.Modules {
			rank, step := "", ""
			if j == 0 {
				rank, step = fmt.Sprint(i+1), stepText(&c.Score)
			}
			cells := append([]string{rank, step}, row(&c.Modules[j], &c.Score.Modules[j])...)
			args := make([]any, len(cells))
			for k, x := range cells {
				args[k] = x
			}
			if err := t.Append(args...); err != nil {
				return err
			}
		}
	}
	return t.Render()
}

func stepText(s *plan.Score) string {
	step := fmt.Sprintf("%.3f", s.StepSeconds)
	if s.Warnings > 0 {
		step += fmt.Sprintf(" (%d warn)", s.Warnings)
	}
	return step
}

// printLines writes each candidate as short lines, one figure each (a
// module's sizes are not cut).
func printLines(w io.Writer, cs []plan.Candidate) error {
	var b strings.Builder
	for i, c := range cs {
		fmt.Fprintf(&b, "#%d %s s\n", i+1, stepText(&c.Score))
		for j, m := range c.Modules {
			p := &c.Score.Modules[j]
			fmt.Fprintf(&b, "  %s [%d,%d)\n    %s\n    %.3f s\n    idle %.0f%%\n    free %s\n", m.Name, m.RankOffset, m.RankOffset+m.NumRanks,
				sizesText(&m), p.Total, 100*p.Idle, bytesText(p.HeadroomBytes))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// widest is the widest line of s, in runes (the tables' box drawing is
// one column a rune).
func widest(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, utf8.RuneCountInString(l))
	}
	return n
}

func bytesText(b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f GiB", b/(1<<30))
}
