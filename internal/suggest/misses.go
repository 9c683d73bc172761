package suggest

import (
	"fmt"
	"io"
	"strings"

	"github.com/mimoplan/mimoplan/internal/plan"
)

// printMisses prints what stops every candidate, when the spec itself
// does, then the closest misses, each with what blocks it.
func printMisses(w io.Writer, reason string, ms []plan.Miss) error {
	if reason != "" {
		fmt.Fprintf(w, "no layout fits: %s\n", reason)
		if len(ms) == 0 {
			return nil
		}
		fmt.Fprintln(w, "the closest misses:")
	} else {
		fmt.Fprintln(w, "no layout fits; the closest misses:")
	}
	for i, m := range ms {
		fmt.Fprintf(w, "%d. %s\n", i+1, describeChoices(m.Modules))
		for _, b := range m.Blocks {
			fmt.Fprintf(w, "   - %s\n", b)
		}
	}
	if len(ms) == 0 {
		_, err := fmt.Fprintln(w, "   (the spec's constraints allow no placement at all: check num_ranks, rank_offset, align and colocated)")
		return err
	}
	return nil
}

// describeChoices writes a candidate's modules on one line.
func describeChoices(cs []plan.Choice) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s [%d,%d) %s", c.Name, c.RankOffset, c.RankOffset+c.NumRanks, sizesText(&c))
	}
	return strings.Join(parts, "; ")
}

func sizesText(c *plan.Choice) string {
	s := fmt.Sprintf("tp%d cp%d pp%d", c.TP, c.CP, c.PP)
	if c.VPP > 1 {
		s += fmt.Sprintf(" vpp%d", c.VPP)
	}
	s += fmt.Sprintf(" dp%d", c.DP)
	if c.EP > 1 || c.ExptTP > 1 {
		s += fmt.Sprintf(" ep%d etp%d", c.EP, c.ExptTP)
	}
	if c.GTPRemat > 1 || c.ExptGTPRemat > 1 {
		s += fmt.Sprintf(" gtp%d egtp%d", c.GTPRemat, c.ExptGTPRemat)
	}
	return s
}
