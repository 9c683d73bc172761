package suggest

import (
	"fmt"
	"io"
	"strings"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/plan"
)

// WriteLayout writes candidate c of spec (its text) as a layout, through
// layout.FillSpec, under a comment block with the score's parts and memory
// headroom.
func WriteLayout(w io.Writer, spec []byte, c *plan.Candidate) error {
	mods := make([]layout.Module, len(c.Modules))
	for i, ch := range c.Modules {
		mods[i] = layout.Module{NumRanks: ch.NumRanks, RankOffset: ch.RankOffset, TP: ch.TP, GTPRemat: ch.GTPRemat, CP: ch.CP, PP: ch.PP,
			VPP: ch.VPP, DP: ch.DP, EP: ch.EP, ExptTP: ch.ExptTP, ExptGTPRemat: ch.ExptGTPRemat}
	}
	return layout.FillSpec(w, spec, mods, c.Machine, why(c))
}

// why is the comment block of a written layout.
func why(c *plan.Candidate) string {
	s := &c.Score
	var b strings.Builder
	fmt.Fprintf(&b, "Written by mimoplan suggest. Estimated step: %.3f s per global batch of %d samples", s.StepSeconds, s.Samples)
	if s.Warnings > 0 {
		fmt.Fprintf(&b, ", %d warning(s) that mimoplan validate names", s.Warnings)
	}
	b.WriteString(" (docs/suggest.md).\n")
	for _, m := range s.Modules {
		fmt.Fprintf(&b, "%s: %.3f s = compute %.3f + bubble %.3f + tp %.3f + cp %.3f + ep %.3f + pp %.3f + dp %.3f",
			m.Name, m.Total, m.Compute, m.Bubble, m.TP, m.CP, m.EP, m.PP, m.DP)
		if m.Idle > 0 {
			fmt.Fprintf(&b, "; idle %.0f%%", 100*m.Idle)
		}
		if m.MemoryBytes > 0 {
			fmt.Fprintf(&b, "; memory %s", gib(m.MemoryBytes))
			if m.HeadroomBytes != 0 {
				fmt.Fprintf(&b, ", headroom %s", gib(m.HeadroomBytes))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func gib(b float64) string { return fmt.Sprintf("%.1f GiB", b/(1<<30)) }
