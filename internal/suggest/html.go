package suggest

import (
	"bytes"
	"io"

	"github.com/mimoplan/mimoplan/internal/plan"
	"github.com/mimoplan/mimoplan/internal/suggestpage"
)

// printHTML writes the candidates as suggestpage's page; when none fits,
// the page says so with what printMisses says.
func printHTML(w io.Writer, res *plan.Result, title string, gpuMemory float64) error {
	p := suggestpage.Page{Title: title, GPUMemory: gpuMemory, Margin: res.HeadroomKept}
	if len(res.Candidates) == 0 {
		var b bytes.Buffer
		if err := printMisses(&b, res.Reason, res.Misses); err != nil {
			return err
		}
		p.NoFit = b.String()
	}
	return suggestpage.HTML(w, res.Candidates, p)
}
