package plan

import (
	"bufio"
	"encoding/json"
	"io"

	"go.yaml.in/yaml/v3"
)

// Print writes res in format: json, yaml, or else a table of the
// candidates, or the closest misses when none fits.
func Print(w io.Writer, format string, res *Result) error {
	switch format {
	case "json":
		if len(res.Candidates) == 0 {
			res.Candidates = []Candidate{}
			return json.NewEncoder(w).Encode(res)
		}
		return printJSON(w, res.Candidates)
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

// printJSON writes the candidates as encoding/json writes a Result
// without misses, one candidate at a time: --all's output can be half a
// gigabyte, and held whole it would double the memory the candidates take.
func printJSON(w io.Writer, cs []Candidate) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"candidates":[`)
	for i := range cs {
		if i > 0 {
			bw.WriteByte(',')
		}
		b, err := json.Marshal(&cs[i])
		if err != nil {
			return err
		}
		bw.Write(b)
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}
