// Package suggest is mimoplan suggest's flow and output: it reads the spec,
// asks plan for the layouts, prints them (one printer a file: table, json,
// yaml, the closest misses) and writes the best one with --out.
package suggest

import (
	"io"

	"github.com/mimoplan/mimoplan/internal/plan"
)

// Print writes res in format: json, yaml, or else a table of the
// candidates, or the closest misses when none fits.
func Print(w io.Writer, format string, res *plan.Result) error {
	switch format {
	case "json":
		return printJSON(w, res)
	case "yaml":
		return printYAML(w, res)
	}
	if len(res.Candidates) == 0 {
		return printMisses(w, res.Misses)
	}
	return printTable(w, res.Candidates)
}
