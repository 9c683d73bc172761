package estimate

import (
	"bufio"
	_ "embed"
	"fmt"
	"html"
	"io"

	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/validate"
)

//go:embed assets/page.css
var pageCSS string

//go:embed assets/page.js
var pageJS string

// Segment is one stacked piece of a module's bar: Megatron's weights or
// activations less that part's negative terms, a positive term, or an
// overhead term. A module's segments add up to its total.
type Segment struct {
	Term  string // "megatron_weights", "megatron_activations" or a term's name
	Part  model.Part
	Label string
	Bytes float64
	Why   string
}

// Segments stacks a module's figures: per part, Megatron's figure less the
// part's negative terms (named in the label), then each positive term;
// then the overheads.
func Segments(m *ModuleReport) []Segment {
	var out []Segment
	for _, part := range []struct {
		part  model.Part
		term  string
		base  float64
		label string
	}{
		{model.PartWeights, "megatron_weights", m.Megatron.WeightAndOptimizerBytes, "Megatron's weights and optimizer"},
		{model.PartActivations, "megatron_activations", m.Megatron.ActivationBytes, "Megatron's activations"},
	} {
		base, label := part.base, part.label
		var pos []Segment
		for _, t := range m.Terms {
			switch {
			case t.Part != part.part:
			case t.Bytes < 0:
				base += t.Bytes
				label += " less " + t.Name
			default:
				pos = append(pos, Segment{Term: t.Name, Part: t.Part, Label: t.Name, Bytes: t.Bytes, Why: t.Why})
			}
		}
		out = append(out, Segment{Term: part.term, Part: part.part, Label: label, Bytes: max(base, 0),
			Why: "the figure of megatron/training/theoretical_memory_usage.py for the module as the job, less the negative terms named"})
		out = append(out, pos...)
	}
	for _, t := range m.Terms {
		if t.Part == model.PartOverhead {
			out = append(out, Segment{Term: t.Name, Part: t.Part, Label: t.Name, Bytes: t.Bytes, Why: t.Why})
		}
	}
	return out
}

// PrintHTML writes estimate's page: one self-contained file (styles and
// script inline, nothing fetched) with each module's memory as stacked
// terms against the GPU's capacity (cluster.gpu_memory), Megatron's own
// total beneath, and the measured figure where measured names the module.
func PrintHTML(w io.Writer, res *validate.Result, measured map[string]Measured) error {
	doc := Build(res)
	b := bufio.NewWriter(w)
	esc := html.EscapeString
	fmt.Fprintf(b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s — mimoplan estimate</title>\n<style>%s</style></head>\n<body>\n", esc(doc.File), pageCSS)
	fmt.Fprintf(b, "<header><h1>%s</h1>", esc(doc.File))
	if doc.GPUMemoryBytes > 0 {
		fmt.Fprintf(b, "GPU memory (cluster.gpu_memory): <b id=\"capacity\" data-bytes=\"%d\">%s</b>. ", doc.GPUMemoryBytes, gib(float64(doc.GPUMemoryBytes)))
	} else {
		b.WriteString("No cluster.gpu_memory: no capacity to compare with. ")
	}
	b.WriteString("Per GPU on each module's first pipeline stage (docs/estimate.md). Click a piece for its source.</header>\n<main><div id=\"modules\">\n")
	for i := range doc.Modules {
		m := &doc.Modules[i]
		meas, ok := measured[m.Name]
		writeModule(b, m, doc.GPUMemoryBytes, meas, ok)
	}
	for _, n := range doc.NotEstimated {
		fmt.Fprintf(b, "<section class=\"none\" data-module=\"%s\"><h2>%s</h2>not estimated (no model, or a rule fails)</section>\n", esc(n), esc(n))
	}
	fmt.Fprintf(b, "</div><aside id=\"info\">Click a piece of a bar.</aside></main>\n<script>%s</script>\n</body></html>\n", pageJS)
	return b.Flush()
}

func writeModule(b *bufio.Writer, m *ModuleReport, capacity int64, meas Measured, hasMeas bool) {
	esc := html.EscapeString
	segs := Segments(m)
	top := max(float64(capacity), float64(m.TotalBytes), m.Megatron.TotalBytes, meas.SMIBytes)
	const x0, width = 90.0, 780.0
	scale := width / max(top, 1)
	fmt.Fprintf(b, "<section data-module=\"%s\" data-total=\"%d\" data-megatron=\"%.0f\"", esc(m.Name), m.TotalBytes, m.Megatron.TotalBytes)
	if hasMeas {
		fmt.Fprintf(b, " data-measured=\"%.0f\"", meas.SMIBytes)
	}
	fmt.Fprintf(b, "><h2>%s: %s", esc(m.Name), gib(float64(m.TotalBytes)))
	if capacity > 0 {
		fmt.Fprintf(b, " of %s (%.0f%%)", gib(float64(capacity)), 100*float64(m.TotalBytes)/float64(capacity))
	}
	if hasMeas {
		fmt.Fprintf(b, "; measured %s (nvidia-smi, busiest rank)", gib(meas.SMIBytes))
	}
	b.WriteString("</h2>\n<svg viewBox=\"0 0 900 86\" role=\"img\">\n")
	b.WriteString("<text x=\"0\" y=\"22\">mimoplan</text><text x=\"0\" y=\"56\">Megatron</text>\n")
	x := x0
	for _, s := range segs {
		cls := "seg " + string(s.Part)
		if s.Term != "megatron_weights" && s.Term != "megatron_activations" && s.Part != model.PartOverhead {
			cls += " term"
		}
		wd := s.Bytes * scale
		fmt.Fprintf(b, "<rect class=\"%s\" x=\"%.2f\" y=\"6\" width=\"%.2f\" height=\"24\" data-module=\"%s\" data-term=\"%s\" data-part=\"%s\" data-bytes=\"%.0f\" data-label=\"%s\" data-why=\"%s\"><title>%s: %s</title></rect>\n",
			cls, x, wd, esc(m.Name), esc(s.Term), s.Part, s.Bytes, esc(s.Label), esc(s.Why), esc(s.Label), gib(s.Bytes))
		x += wd
	}
	fmt.Fprintf(b, "<rect class=\"megatron\" x=\"%.2f\" y=\"40\" width=\"%.2f\" height=\"24\"><title>Megatron's total: %s</title></rect>\n", x0, m.Megatron.TotalBytes*scale, gib(m.Megatron.TotalBytes))
	if capacity > 0 {
		cx := x0 + float64(capacity)*scale
		fmt.Fprintf(b, "<line class=\"cap\" x1=\"%.2f\" x2=\"%.2f\" y1=\"0\" y2=\"70\"/><text x=\"%.2f\" y=\"82\" text-anchor=\"end\">GPU %s</text>\n", cx, cx, cx, gib(float64(capacity)))
	}
	if hasMeas {
		mx := x0 + meas.SMIBytes*scale
		anchor := "start"
		if mx > 700 {
			anchor = "end"
		}
		fmt.Fprintf(b, "<line class=\"meas\" x1=\"%.2f\" x2=\"%.2f\" y1=\"2\" y2=\"34\"/><text x=\"%.2f\" y=\"82\" text-anchor=\"%s\">measured %s</text>\n", mx, mx, mx, anchor, gib(meas.SMIBytes))
	}
	b.WriteString("</svg>\n<table><tr><th>piece</th><th>part</th><th>GiB</th><th>why</th></tr>\n")
	for _, s := range segs {
		fmt.Fprintf(b, "<tr><td><span class=\"sw sw-%s\"></span>%s</td><td>%s</td><td>%.2f</td><td class=\"why\">%s</td></tr>\n", s.Part, esc(s.Label), s.Part, s.Bytes/(1<<30), esc(s.Why))
	}
	for _, t := range m.Terms {
		if t.Bytes < 0 {
			fmt.Fprintf(b, "<tr class=\"neg\"><td>%s</td><td>%s</td><td>%.2f</td><td class=\"why\">%s</td></tr>\n", esc(t.Name), t.Part, t.Bytes/(1<<30), esc(t.Why))
		}
	}
	b.WriteString("</table></section>\n")
}
