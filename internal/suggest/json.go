package suggest

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/mimoplan/mimoplan/internal/plan"
)

// printJSON writes res as encoding/json writes it; the candidates one at
// a time: --all's output can be half a gigabyte, and held whole it would
// double the memory the candidates take.
func printJSON(w io.Writer, res *plan.Result) error {
	if len(res.Candidates) == 0 {
		res.Candidates = []plan.Candidate{}
		return json.NewEncoder(w).Encode(res)
	}
	cs := res.Candidates
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
