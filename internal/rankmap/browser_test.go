package rankmap_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/rankmap"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func load(tb testing.TB, path string) *validate.Result {
	tb.Helper()
	res, err := validate.Load(filepath.Join(testutil.RepoRoot(), path))
	require.NoError(tb, err)
	require.NotNil(tb, res.Topology)
	return res
}

func writePage(tb testing.TB, res *validate.Result, kind string) string {
	tb.Helper()
	m, err := rankmap.New(res.Topology, kind)
	require.NoError(tb, err)
	path := filepath.Join(tb.TempDir(), "map.html")
	f, err := os.Create(path)
	require.NoError(tb, err)
	require.NoError(tb, m.HTML(f, rankmap.Page{Notes: res.Diags.Notes, Diags: res.Diags.Items}))
	require.NoError(tb, f.Close())
	return path
}

// fold is the page's short form of a group's members.
func fold(members []int) string {
	s := func(xs []int) string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = strconv.Itoa(x)
		}
		return strings.Join(out, " ")
	}
	if len(members) <= 24 {
		return "[" + s(members) + "]"
	}
	return fmt.Sprintf("[%s ... %d] (%d ranks)", s(members[:6]), members[len(members)-1], len(members))
}

// wantGroups is every group rank r belongs to in module m, as the page
// shows them: "kind #index [members]", members sorted.
func wantGroups(m *grid.Module, r int) []string {
	var out []string
	for _, g := range m.Groups {
		i := g.Enum.GroupOf(r)
		if i < 0 {
			continue
		}
		members := g.Enum.AppendGroup(nil, i)
		slices.Sort(members)
		out = append(out, fmt.Sprintf("%s #%d %s", g.Kind, i, fold(members)))
	}
	return out
}

// clickAndRead clicks a rank cell as a user does and reads the groups the
// side panel lists for it.
func clickAndRead(tb testing.TB, b *testutil.Browser, rank int) []string {
	tb.Helper()
	sel := fmt.Sprintf(`.cell[data-rank="%d"]`, rank)
	require.NoError(tb, chromedp.Run(b.Ctx,
		chromedp.Click(sel, chromedp.ByQuery),
		chromedp.WaitVisible(fmt.Sprintf(`#info[data-rank="%d"]`, rank), chromedp.ByQuery)))
	var got []string
	b.Eval(tb, `Array.from(document.querySelectorAll("#info [data-kind]")).map(e => e.textContent)`, &got)
	return got
}

func TestPageNemotron(t *testing.T) {
	res := load(t, "layouts/nemotron-vlm-8gpu.yaml")
	b := testutil.NewBrowser(t)
	path := writePage(t, res, "")
	b.Open(t, path)

	var cells []map[string]string
	b.Eval(t, `Array.from(document.querySelectorAll("[data-rank]")).map(e => ({rank: e.dataset.rank, module: e.dataset.module}))`, &cells)
	require.Len(t, cells, 8, "one cell per rank")
	for i, c := range cells {
		want := "vision"
		if i >= 4 {
			want = "language"
		}
		assert.Equal(t, map[string]string{"rank": strconv.Itoa(i), "module": want}, c)
	}

	// Clicking a rank lists every group it belongs to, as mimoplan
	// enumerates them.
	tp := res.Topology
	for _, r := range []int{1, 5, 6} {
		m := tp.Modules[0]
		if r >= 4 {
			m = tp.Modules[1]
		}
		assert.Equal(t, wantGroups(m, r), clickAndRead(t, b, r), "rank %d", r)
	}
	var text string
	b.Eval(t, `document.querySelector("#info").textContent`, &text)
	assert.Contains(t, text, "rank 6 (node 0, local GPU 6)")
	assert.Contains(t, text, "bridge leader", "language's leaders are the first of each data lane: 4 and 6")
	assert.Contains(t, text, "dense: tp 0/2, gtp_remat 0/1, cp 0/1, dp 1/2, pp 0/1")
	assert.Contains(t, text, "expert: expt_tp 0/1, ep 2/4, expt_gtp_remat 0/1, expt_dp 0/1, pp 0/1")

	// Choosing a kind outlines its groups: each cell carries its group.
	for _, kind := range []string{"dp", "ep", "tp"} {
		b.Eval(t, `(() => { const s = document.querySelector("#kind"); s.value = "`+kind+`"; s.dispatchEvent(new Event("change")); return true })()`, new(bool))
		var groups []string
		b.Eval(t, `Array.from(document.querySelectorAll(".cell")).map(e => e.dataset.group)`, &groups)
		for r, g := range groups {
			m := tp.Modules[r/4]
			e, _ := m.Group(kind)
			assert.Equal(t, fmt.Sprintf("%s:%d", m.Name, e.GroupOf(r)), g, "%s rank %d", kind, r)
		}
	}

	var side string
	b.Eval(t, `document.querySelector("aside").textContent`, &side)
	assert.Contains(t, side, "4 micro-batches per global batch (8 / 2)", "the batch arithmetic")
	b.NoProblems(t)

	if out := os.Getenv("MIMOPLAN_SCREENSHOT"); out != "" {
		var png []byte
		b.Eval(t, `(() => { const s = document.querySelector("#kind"); s.value = "tp"; s.dispatchEvent(new Event("change")); return true })()`, new(bool))
		require.NoError(t, chromedp.Run(b.Ctx,
			chromedp.EmulateViewport(1180, 470),
			chromedp.Click(`.cell[data-rank="5"]`, chromedp.ByQuery),
			chromedp.CaptureScreenshot(&png)))
		require.NoError(t, os.WriteFile(out, png, 0o644))
	}
}

// Warnings are pinned to their modules' ranks: clicking one marks them.
func TestPageWarnings(t *testing.T) {
	res := load(t, "layouts/three-module-4node.yaml")
	b := testutil.NewBrowser(t)
	b.Open(t, writePage(t, res, "dp"))
	var n int
	b.Eval(t, `document.querySelectorAll("#warnings li[data-module]").length`, &n)
	require.Positive(t, n, "the layout has warnings")
	var module string
	b.Eval(t, `document.querySelector("#warnings li[data-module]").dataset.module`, &module)
	require.NoError(t, chromedp.Run(b.Ctx, chromedp.Click(`#warnings li[data-module]`, chromedp.ByQuery)))
	var pinned []string
	b.Eval(t, `Array.from(document.querySelectorAll(".cell.pin")).map(e => e.dataset.rank)`, &pinned)
	m := res.Topology.Module(module)
	require.NotNil(t, m)
	assert.Len(t, pinned, m.NumRanks)
	assert.Equal(t, strconv.Itoa(m.RankOffset), pinned[0])
	b.NoProblems(t)
}

// At 131,072 ranks the page has a cell per node, stays under 5 MB, and a
// node drills down to its ranks, whose groups are right.
func TestPageScale(t *testing.T) {
	res := load(t, "layouts/scale-131072.yaml")
	b := testutil.NewBrowser(t)
	path := writePage(t, res, "")
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Less(t, st.Size(), int64(5<<20), "page size")
	t.Logf("page: %d bytes", st.Size())
	b.Open(t, path)

	var nodes, ranks int
	b.Eval(t, `document.querySelectorAll("[data-node]").length`, &nodes)
	b.Eval(t, `document.querySelectorAll("[data-rank]").length`, &ranks)
	assert.Equal(t, 16384, nodes, "one cell per node")
	assert.Zero(t, ranks, "no rank cells before a drill-down")

	require.NoError(t, chromedp.Run(b.Ctx,
		chromedp.Click(`[data-node="8750"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#drill .cell[data-rank="70007"]`, chromedp.ByQuery)))
	var drilled []string
	b.Eval(t, `Array.from(document.querySelectorAll("#drill [data-rank]")).map(e => e.dataset.rank + " " + e.dataset.module)`, &drilled)
	require.Len(t, drilled, 8)
	assert.Equal(t, "70000 language", drilled[0])
	assert.Equal(t, wantGroups(res.Topology.Module("language"), 70003), clickAndRead(t, b, 70003))

	// group-crosses-node names its first cp group, [16384 16392]: clicking
	// the warning marks the two nodes that hold it.
	require.NoError(t, chromedp.Run(b.Ctx, chromedp.Click(`#warnings li[data-ranks="16384 16392"]`, chromedp.ByQuery)))
	var pinned []string
	b.Eval(t, `Array.from(document.querySelectorAll(".node.pin")).map(e => e.dataset.node)`, &pinned)
	assert.Equal(t, []string{"2048", "2049"}, pinned)
	b.NoProblems(t)
}

// BenchmarkPageLoad131072 is the time headless chromium takes to load the
// 131,072-rank page and run its script (navigation to the ready flag).
func BenchmarkPageLoad131072(b *testing.B) {
	res := load(b, "layouts/scale-131072.yaml")
	br := testutil.NewBrowser(b)
	path := writePage(b, res, "")
	for b.Loop() {
		br.Open(b, path)
	}
	var domComplete float64
	br.Eval(b, `performance.getEntriesByType("navigation")[0].domComplete`, &domComplete)
	b.ReportMetric(domComplete, "ms-domComplete")
}

// BenchmarkPageNemotron is the same for the 8-rank page.
func BenchmarkPageLoadNemotron(b *testing.B) {
	res := load(b, "layouts/nemotron-vlm-8gpu.yaml")
	br := testutil.NewBrowser(b)
	path := writePage(b, res, "")
	for b.Loop() {
		br.Open(b, path)
	}
}
