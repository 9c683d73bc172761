// Package suggest is mimoplan suggest's flow and output: it reads the spec,
// asks plan for the layouts, prints them (one printer a file: table, json,
// yaml, the closest misses) and writes the best one with --out.
package suggest

import (
	"fmt"
	"io"

	"github.com/mimoplan/mimoplan/internal/plan"
)

// Print writes res in format: json, yaml, or else a table of the
// candidates, or the closest misses when none fits.
func Print(w io.Writer, format string, res *plan.Result) error { return PrintWidth(w, format, res, 0) }

// PrintWidth is Print with the table kept within width columns (0: any).
func PrintWidth(w io.Writer, format string, res *plan.Result, width int) error {
	switch format {
	case "json":
		return printJSON(w, res)
	case "yaml":
		return printYAML(w, res)
	}
	if len(res.Candidates) == 0 {
		return printMisses(w, res.Reason, res.Misses)
	}
	if err := printTable(w, res.Candidates, width); err != nil {
		return err
	}
	if res.HeadroomKept > 0 {
		_, err := fmt.Fprintf(w, "every layout leaves at least %.1f GiB of a GPU's memory free (--headroom)\n", res.HeadroomKept/(1<<30))
		return err
	}
	return nil
}
