package validate

import (
	"fmt"
	"strings"

	"github.com/mimoplan/mimoplan/internal/english"
)

// maxSummaryModules bounds the modules a summary line lists.
const maxSummaryModules = 8

// Summary is the one-line verdict the text format ends a file's report
// with.
func (r *Result) Summary(strict bool) string {
	e, w := r.Diags.Count()
	if !r.Valid(strict) {
		return fmt.Sprintf("%s: invalid: %s", r.Diags.File, counts(e, w))
	}
	t := r.Topology
	var mods []string
	for i, m := range t.Modules {
		if i == maxSummaryModules && len(t.Modules) > maxSummaryModules+1 {
			mods = append(mods, fmt.Sprintf("and %d more", len(t.Modules)-i))
			break
		}
		mods = append(mods, fmt.Sprintf("%s [%d, %d)", m.Name, m.RankOffset, m.RankOffset+m.NumRanks))
	}
	s := fmt.Sprintf("%s: valid: %s, %d ranks, target %s: %s", r.Diags.File, t.Mode, t.WorldSize, t.Target, strings.Join(mods, ", "))
	if w > 0 {
		s += " (" + counts(0, w) + ")"
	}
	return s
}

func counts(e, w int) string {
	var parts []string
	if e > 0 {
		parts = append(parts, english.Plural(e, "error"))
	}
	if w > 0 {
		parts = append(parts, english.Plural(w, "warning"))
	}
	if len(parts) == 0 {
		return "no problems"
	}
	return strings.Join(parts, ", ")
}
