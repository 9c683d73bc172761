// Package suggestpage writes suggest's candidates as one self-contained
// HTML page (suggest --format html): each candidate's modules side by side
// as stacked bars of their time per global batch (compute, bubble, each
// communication, idle), and each module's memory against the GPU's with
// the headroom suggest keeps.
package suggestpage

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/mimoplan/mimoplan/internal/plan"
)

//go:embed page.tmpl
var pageTmpl string

var tmpl = template.Must(template.New("page").Parse(pageTmpl))

// Page is what the page states beside the candidates.
type Page struct {
	Title string
	// GPUMemory is the GPU's memory in bytes (0: unknown, no memory bars)
	// and Margin what suggest keeps free of it (--headroom).
	GPUMemory, Margin float64
	// NoFit, when no candidate fits, is suggest's account of why (the
	// blocker and the closest misses), shown in place of the charts.
	NoFit string
}

// Parts are the bars' segments, bottom up, with their colours.
var Parts = []struct{ Name, Color string }{
	{"compute", "#4e79a7"}, {"bubble", "#f28e2b"}, {"tp", "#e15759"}, {"cp", "#76b7b2"},
	{"ep", "#59a14f"}, {"pp", "#edc948"}, {"dp", "#b07aa1"}, {"idle", "#d3d3d3"},
}

const (
	chartHeight = 320.0 // px of the tallest step
	top         = 16.0  // px above it, for the top tick's label
	barWidth    = 26.0
	barGap      = 6.0
	groupGap    = 34.0
	memWidth    = 240.0
)

type segment struct {
	Part, Color        string
	Seconds, Y, Height float64
}

type bar struct {
	Module   string
	Short    string // the module's name as it fits under its bar
	X        float64
	Total    float64
	Segments []segment
}

type group struct {
	Rank          int
	X, Width      float64
	Step          float64
	Label, Layout string
	Bars          []bar
	Memory        []memRow
}

type memRow struct {
	Module                string
	Bytes, Headroom       float64
	Width, Limit          float64 // px: the memory, and where the margin starts
	GiB, HeadroomGiB, Pct string
	Over                  bool // inside the margin
}

type view struct {
	Page
	Parts       []struct{ Name, Color string }
	Groups      []group
	Width       float64
	Height      float64
	ChartHeight float64
	MaxStep     float64
	MemWidth    float64
	BarWidth    float64
	Base        float64 // the bars' foot, px
	GPUGiB      string
	MarginGiB   string
	Ticks       []tick
}

type tick struct {
	Y     float64
	Label string
}

// HTML writes the page for candidates cs, best first.
func HTML(w io.Writer, cs []plan.Candidate, p Page) error {
	v := build(cs, p)
	b := bufio.NewWriter(w)
	if err := tmpl.Execute(b, v); err != nil {
		return fmt.Errorf("suggest page: %w", err)
	}
	return b.Flush()
}

func build(cs []plan.Candidate, p Page) view {
	v := view{Page: p, Parts: Parts, ChartHeight: chartHeight, MemWidth: memWidth, BarWidth: barWidth}
	for _, c := range cs {
		v.MaxStep = max(v.MaxStep, c.Score.StepSeconds)
	}
	scale := 0.0
	if v.MaxStep > 0 {
		scale = chartHeight / v.MaxStep
	}
	x := 40.0
	for i, c := range cs {
		g := group{Rank: i + 1, X: x, Step: c.Score.StepSeconds, Label: fmt.Sprintf("#%d", i+1), Layout: layoutText(c)}
		for j, mt := range c.Score.Modules {
			idle := max(0, c.Score.StepSeconds-mt.Total)
			secs := []float64{mt.Compute, mt.Bubble, mt.TP, mt.CP, mt.EP, mt.PP, mt.DP, idle}
			bx := x + float64(j)*(barWidth+barGap)
			br := bar{Module: mt.Name, Short: short(mt.Name), X: bx, Total: mt.Total}
			y := top + chartHeight
			for k, s := range secs {
				if s <= 0 {
					continue
				}
				h := s * scale
				y -= h
				br.Segments = append(br.Segments, segment{Part: Parts[k].Name, Color: Parts[k].Color, Seconds: s, Y: y, Height: h})
			}
			g.Bars = append(g.Bars, br)
			if p.GPUMemory > 0 && mt.MemoryBytes > 0 {
				g.Memory = append(g.Memory, memory(mt, p))
			}
		}
		g.Width = float64(len(c.Score.Modules))*(barWidth+barGap) - barGap
		x += g.Width + groupGap
		v.Groups = append(v.Groups, g)
	}
	v.Width = x
	v.Height = top + chartHeight + 48
	v.Base = top + chartHeight
	for i := 0; i <= 4; i++ {
		s := v.MaxStep * float64(i) / 4
		v.Ticks = append(v.Ticks, tick{Y: top + chartHeight - s*scale, Label: fmt.Sprintf("%.3g s", s)})
	}
	v.GPUGiB = gib(p.GPUMemory)
	v.MarginGiB = gib(p.Margin)
	return v
}

func memory(mt plan.ModuleTime, p Page) memRow {
	r := memRow{Module: mt.Name, Bytes: mt.MemoryBytes, Headroom: p.GPUMemory - mt.MemoryBytes}
	r.Width = min(1, mt.MemoryBytes/p.GPUMemory) * memWidth
	r.Limit = max(0, p.GPUMemory-p.Margin) / p.GPUMemory * memWidth
	r.GiB = gib(mt.MemoryBytes)
	r.HeadroomGiB = gib(r.Headroom)
	r.Pct = fmt.Sprintf("%.0f%%", 100*mt.MemoryBytes/p.GPUMemory)
	r.Over = mt.MemoryBytes > p.GPUMemory-p.Margin
	return r
}

func gib(b float64) string { return fmt.Sprintf("%.1f GiB", b/(1<<30)) }

// layoutText is a candidate's modules as one line each: span and sizes.
func layoutText(c plan.Candidate) string {
	var lines []string
	for _, m := range c.Modules {
		s := fmt.Sprintf("%s [%d, %d) tp %d", m.Name, m.RankOffset, m.RankOffset+m.NumRanks, m.TP)
		for _, f := range []struct {
			name string
			v    int
		}{{"cp", m.CP}, {"pp", m.PP}, {"vpp", m.VPP}, {"dp", m.DP}, {"ep", m.EP}, {"expt_tp", m.ExptTP}} {
			if f.v > 1 || f.name == "dp" {
				s += fmt.Sprintf(" %s %d", f.name, f.v)
			}
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

// short is name cut to what fits under a bar.
func short(name string) string {
	if r := []rune(name); len(r) > 4 {
		return string(r[:4])
	}
	return name
}
