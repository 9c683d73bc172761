package suggestpage_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/plan"
	"github.com/mimoplan/mimoplan/internal/suggestpage"
)

// mod is a module's score: parts in Parts' order (idle excluded) and its
// memory.
func mod(name string, mem float64, parts ...float64) plan.ModuleTime {
	var mt plan.ModuleTime
	mt.Name = name
	ps := []*float64{&mt.Compute, &mt.Bubble, &mt.TP, &mt.CP, &mt.EP, &mt.PP, &mt.DP}
	for i, p := range parts {
		*ps[i] = p
		mt.Total += p
	}
	mt.MemoryBytes = mem
	mt.HeadroomBytes = 80*(1<<30) - mem
	return mt
}

func cand(mods ...plan.ModuleTime) plan.Candidate {
	var c plan.Candidate
	for _, m := range mods {
		c.Score.StepSeconds = max(c.Score.StepSeconds, m.Total)
		c.Score.SumSeconds += m.Total
		c.Score.Modules = append(c.Score.Modules, m)
		c.Modules = append(c.Modules, plan.Choice{Name: m.Name, NumRanks: 8})
	}
	for i := range c.Score.Modules {
		c.Score.Modules[i].Idle = 1 - c.Score.Modules[i].Total/c.Score.StepSeconds
	}
	return c
}

// cases are the pages the tests render: a MIMO pair side by side, a
// single module, one over the margin, and a title that needs escaping.
var cases = []struct {
	name  string
	cs    []plan.Candidate
	page  suggestpage.Page
	parts int // segments drawn
}{
	{"mimo", []plan.Candidate{
		cand(mod("vision", 20<<30, 0.2, 0, 0.01), mod("language", 60<<30, 2.0, 0.3, 0.1, 0, 0, 0.05, 0.1)),
		cand(mod("vision", 30<<30, 0.5), mod("language", 70<<30, 2.2, 0.1, 0.2)),
	}, suggestpage.Page{Title: "vlm-16gpu", GPUMemory: 80 << 30, Margin: 4 << 30}, 3 + 5 + 2 + 3},
	{"single", []plan.Candidate{cand(mod("language", 79<<30, 1, 0.5, 0.25, 0.1, 0.05, 0.02, 0.01))},
		suggestpage.Page{Title: "llama", GPUMemory: 80 << 30, Margin: 4 << 30}, 7},
	{"escaped", []plan.Candidate{cand(mod("language", 0, 1))}, suggestpage.Page{Title: "<script>alert(1)</script>"}, 1},
	{"nothing fits", nil, suggestpage.Page{Title: "spec", GPUMemory: 80 << 30, NoFit: "no layout fits: <the blocker>\n"}, 0},
}

func render(t *testing.T, i int) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, suggestpage.HTML(&b, cases[i].cs, cases[i].page))
	return b.Bytes()
}

// The page holds a segment per nonzero part (idle included), a memory bar
// per module with a memory when the GPU's is known, and escapes its text.
func TestHTML(t *testing.T) {
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := string(render(t, i))
			require.Equal(t, c.parts, strings.Count(out, `<rect class="seg"`))
			require.Equal(t, len(c.cs), strings.Count(out, `<g class="cand-bars"`))
			mems := 0
			if c.page.GPUMemory > 0 {
				for _, cd := range c.cs {
					mems += len(cd.Score.Modules)
				}
			}
			require.Equal(t, mems, strings.Count(out, `<div class="mem"`))
			require.NotContains(t, out, "<script>alert")
			if c.page.NoFit != "" {
				require.Contains(t, out, "<pre id=\"nofit\">no layout fits: &lt;the blocker&gt;")
			}
			require.NotContains(t, out, "http://")
			require.NotContains(t, out, "https://")
		})
	}
}

func writePage(t testing.TB, i int) string {
	path := filepath.Join(t.TempDir(), "page.html")
	require.NoError(t, os.WriteFile(path, render(t.(*testing.T), i), 0o644))
	return path
}
