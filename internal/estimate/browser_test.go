package estimate_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/estimate"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func writeHTML(tb testing.TB, layoutPath, config string) (string, *validate.Result, map[string]estimate.Measured) {
	tb.Helper()
	res, err := validate.Load(filepath.Join(testutil.RepoRoot(), layoutPath))
	require.NoError(tb, err)
	var measured map[string]estimate.Measured
	if config != "" {
		f, err := os.Open(filepath.Join(testutil.RepoRoot(), "testdata", "measured", "h200-x2.json"))
		require.NoError(tb, err)
		defer f.Close()
		measured, err = estimate.ReadMeasured(f, config)
		require.NoError(tb, err)
	}
	path := filepath.Join(tb.TempDir(), "estimate.html")
	out, err := os.Create(path)
	require.NoError(tb, err)
	require.NoError(tb, estimate.PrintHTML(out, res, measured))
	require.NoError(tb, out.Close())
	return path, res, measured
}

type drawn struct {
	Module, Term string
	X, W, Bytes  float64
}

// In a real browser the page loads on its own (no request leaves the file,
// no script error), draws each module's pieces in order, each as wide as
// its bytes on one scale, with the GPU's capacity and the measured figure
// on that scale, and a click on a piece tells its source.
func TestHTMLInBrowser(t *testing.T) {
	for _, tc := range []struct{ layout, config string }{
		{"testdata/measured/mimo-vit-gpt.yaml", "mimo-vit-gpt"},
		{"testdata/measured/moe-ep2.yaml", "moe-ep2"},
		{"testdata/published/gpt3-175b-bridge.yaml", ""},
		{"layouts/three-module-4node.yaml", ""},
	} {
		t.Run(filepath.Base(tc.layout), func(t *testing.T) {
			path, res, measured := writeHTML(t, tc.layout, tc.config)
			b := testutil.NewBrowser(t)
			b.Open(t, path)
			var segs []drawn
			b.Eval(t, `Array.from(document.querySelectorAll("rect.seg")).map(e => ({Module: e.dataset.module, Term: e.dataset.term,
				X: e.x.baseVal.value, W: e.width.baseVal.value, Bytes: Number(e.dataset.bytes)}))`, &segs)
			doc := estimate.Build(res)
			require.NotEmpty(t, doc.Modules)
			for _, m := range doc.Modules {
				want := estimate.Segments(&m)
				var got []drawn
				for _, s := range segs {
					if s.Module == m.Name {
						got = append(got, s)
					}
				}
				require.Len(t, got, len(want), m.Name)
				// The page writes positions to 0.01 of a 900-wide box.
				const px = 0.2
				x, width, bytes := got[0].X, 0.0, 0.0
				for i, s := range got {
					assert.Equal(t, want[i].Term, s.Term)
					assert.InDelta(t, want[i].Bytes, s.Bytes, 1)
					assert.InDelta(t, x, s.X, px, "%s %s starts where the piece before ends", m.Name, s.Term)
					x += s.W
					width += s.W
					bytes += s.Bytes
				}
				scale := width / bytes
				require.Positive(t, scale)
				for _, s := range got {
					assert.InDelta(t, s.Bytes*scale, s.W, px, "%s %s is as wide as its bytes", m.Name, s.Term)
				}
				var marks struct{ Cap, Meas float64 }
				b.Eval(t, fmt.Sprintf(`(() => { const s = document.querySelector('section[data-module=%q]');
					const c = s.querySelector("line.cap"), m = s.querySelector("line.meas");
					return {Cap: c ? c.x1.baseVal.value : -1, Meas: m ? m.x1.baseVal.value : -1} })()`, m.Name), &marks)
				if res.Layout.GPUMemory > 0 {
					assert.InDelta(t, got[0].X+float64(res.Layout.GPUMemory)*scale, marks.Cap, px, "capacity line")
				} else {
					assert.Equal(t, -1.0, marks.Cap)
				}
				if me, ok := measured[m.Name]; ok {
					assert.InDelta(t, got[0].X+me.SMIBytes*scale, marks.Meas, px, "measured line")
				} else {
					assert.Equal(t, -1.0, marks.Meas)
				}
			}
			last := segs[len(segs)-1]
			sel := fmt.Sprintf(`rect.seg[data-module=%q][data-term=%q]`, last.Module, last.Term)
			require.NoError(t, chromedp.Run(b.Ctx, chromedp.Click(sel, chromedp.ByQuery),
				chromedp.WaitVisible(fmt.Sprintf(`#info[data-term=%q]`, last.Term), chromedp.ByQuery)))
			var info string
			b.Eval(t, `document.querySelector("#info").textContent`, &info)
			assert.Contains(t, info, last.Term)
			assert.Contains(t, info, fmt.Sprintf("%.2f GiB", math.Round(last.Bytes/(1<<30)*100)/100))
			b.NoProblems(t)
		})
	}
}
