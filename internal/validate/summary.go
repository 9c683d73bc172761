package validate

import (
	"fmt"
	"strings"

	"github.com/mimoplan/mimoplan/internal/topo"
)

// maxSummaryModules bounds the modules a summary line lists.
const maxSummaryModules = 8

// Summary is the one-line verdict the text format ends a file's report
// with.
func (r *Result) Summary(strict bool) string { return r.Diags.Verdict(strict) }

// describe says what a layout with a topology is, for the verdict line.
func describe(t *topo.Topology) string {
	var mods []string
	for i, m := range t.Modules {
		if i == maxSummaryModules && len(t.Modules) > maxSummaryModules+1 {
			mods = append(mods, fmt.Sprintf("and %d more", len(t.Modules)-i))
			break
		}
		mods = append(mods, fmt.Sprintf("%s [%d, %d)", m.Name, m.RankOffset, m.RankOffset+m.NumRanks))
	}
	return fmt.Sprintf("%s, %d ranks, target %s: %s", t.Mode, t.WorldSize, t.Target, strings.Join(mods, ", "))
}
