package suggestpage_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/testutil"
)

type drawnBar struct {
	Candidate int       `json:"candidate"`
	Module    string    `json:"module"`
	Step      float64   `json:"step"`
	Heights   []float64 `json:"heights"`
	Seconds   []float64 `json:"seconds"`
	Left      float64   `json:"left"`
	Right     float64   `json:"right"`
}

type drawnMem struct {
	Module string  `json:"module"`
	Bytes  float64 `json:"bytes"`
	Used   float64 `json:"used"`
	Whole  float64 `json:"whole"`
	Margin float64 `json:"margin"`
}

// In a headless chromium each page loads without errors or requests; every
// module's bar, drawn, is as tall as the step (its parts and idle), the
// tallest step 320 px; bars do not overlap; memory bars are the memory's
// share of the GPU's width and the hatched margin the --headroom's.
func TestPageInBrowser(t *testing.T) {
	b := testutil.NewBrowser(t)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b.Open(t, writePage(t, i))
			var bars []drawnBar
			b.Eval(t, `Array.from(document.querySelectorAll("g.bar")).map(g => {
				const segs = Array.from(g.querySelectorAll("rect.seg"));
				const r = g.getBoundingClientRect();
				return {candidate: +g.parentNode.dataset.candidate, module: g.dataset.module, step: +g.parentNode.dataset.step,
					heights: segs.map(s => s.getBoundingClientRect().height), seconds: segs.map(s => +s.dataset.seconds),
					left: r.left, right: r.right};
			})`, &bars)
			nmods := 0
			maxStep := 0.0
			for _, cd := range c.cs {
				nmods += len(cd.Score.Modules)
				maxStep = max(maxStep, cd.Score.StepSeconds)
			}
			require.Len(t, bars, nmods)
			for j, br := range bars {
				var h, s float64
				for k := range br.Heights {
					h += br.Heights[k]
					s += br.Seconds[k]
				}
				assert.InDelta(t, br.Step, s, 1e-9*br.Step, "bar %d: its parts and idle make the step", j)
				assert.InDelta(t, 320*br.Step/maxStep, h, 0.5, "bar %d: drawn height", j)
				if j > 0 {
					assert.GreaterOrEqual(t, br.Left, bars[j-1].Right, "bar %d overlaps the one before", j)
				}
			}
			var mems []drawnMem
			b.Eval(t, `Array.from(document.querySelectorAll("div.mem")).map(d => ({module: d.dataset.module, bytes: +d.dataset.bytes,
				used: d.querySelector(".used").getBoundingClientRect().width, whole: d.clientWidth,
				margin: d.querySelector(".margin").getBoundingClientRect().width}))`, &mems)
			for _, m := range mems {
				want := math.Min(1, m.Bytes/c.page.GPUMemory) * m.Whole
				assert.InDelta(t, want, m.Used, 0.6, "%s: memory bar", m.Module)
				assert.InDelta(t, c.page.Margin/c.page.GPUMemory*m.Whole, m.Margin, 0.6, "%s: margin", m.Module)
			}
			var title string
			b.Eval(t, `document.title`, &title)
			assert.Contains(t, title, c.page.Title)
			b.NoProblems(t)
		})
	}
}
