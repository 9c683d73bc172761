package suggest

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/mimoplan/mimoplan/internal/plan"
)

// printTable prints one row per module of each candidate, best
// candidate first, with the step time and its parts.
func printTable(w io.Writer, cs []plan.Candidate) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithRowAlignment(tw.AlignLeft))
	t.Header("#", "step s", "module", "ranks", "sizes", "time s", "compute", "bubble", "comm", "idle", "memory", "headroom")
	for i, c := range cs {
		for j, m := range c.Modules {
			p := c.Score.Modules[j]
			rank, step := "", ""
			if j == 0 {
				rank, step = fmt.Sprint(i+1), fmt.Sprintf("%.3f", c.Score.StepSeconds)
				if c.Score.Warnings > 0 {
					step += fmt.Sprintf(" (%d warn)", c.Score.Warnings)
				}
			}
			comm := p.TP + p.CP + p.EP + p.PP + p.DP
			if err := t.Append(rank, step, m.Name, fmt.Sprintf("[%d,%d)", m.RankOffset, m.RankOffset+m.NumRanks), sizesText(&m),
				fmt.Sprintf("%.3f", p.Total), fmt.Sprintf("%.3f", p.Compute), fmt.Sprintf("%.3f", p.Bubble), fmt.Sprintf("%.3f", comm),
				fmt.Sprintf("%.0f%%", 100*p.Idle), bytesText(p.MemoryBytes), bytesText(p.HeadroomBytes)); err != nil {
				return err
			}
		}
	}
	return t.Render()
}

func bytesText(b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f GiB", b/(1<<30))
}
