package plan

import (
	"encoding/json"
	"io"

	"go.yaml.in/yaml/v3"
)

// Print writes res in format: json, yaml, or else a table of the
// candidates, or the closest misses when none fits.
func Print(w io.Writer, format string, res *Result) error {
	switch format {
	case "json":
		if res.Candidates == nil {
			res.Candidates = []Candidate{}
		}
		enc := json.NewEncoder(w)
		return enc.Encode(res)
	case "yaml":
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		if err := enc.Encode(res); err != nil {
			return err
		}
		return enc.Close()
	}
	if len(res.Candidates) == 0 {
		return printMisses(w, res.Misses)
	}
	return printTable(w, res.Candidates)
}
