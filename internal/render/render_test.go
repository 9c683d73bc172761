package render_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/validate"
)

const twoNode = `version: 1
name: two-node
cluster: {nodes: 2, gpus_per_node: 4}
modules:
  - name: vision
    num_ranks: 4
    tp: 2
  - name: language
    num_ranks: 4
    tp: 2
    pp: 2
`

func topo(t *testing.T, src string) *validate.Topology {
	t.Helper()
	l, d := layout.Parse("t.yaml", []byte(src))
	res := validate.Check(l, d)
	require.NotNil(t, res.Topology, "the core rules must pass: %+v", res.Diags.Items)
	return res.Topology
}

func run(t *testing.T, tp *validate.Topology, o render.Options) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, render.Render(&b, tp, o))
	return b.String()
}

// The YAML and CSV forms must carry exactly the groups of the JSON form.
func TestFormatsAgree(t *testing.T) {
	tp := topo(t, twoNode)
	var fromJSON, fromYAML planJSON
	require.NoError(t, json.Unmarshal([]byte(run(t, tp, render.Options{Format: "json"})), &fromJSON))
	var anyYAML any
	require.NoError(t, yaml.Unmarshal([]byte(run(t, tp, render.Options{Format: "yaml"})), &anyYAML))
	viaJSON, err := json.Marshal(anyYAML)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(viaJSON, &fromYAML))
	assert.Equal(t, fromJSON, fromYAML)
	assert.Equal(t, "non_colocated", fromJSON.Mode)
	assert.Equal(t, [][]int{{4, 5}, {6, 7}}, fromJSON.Modules[1].Groups["tp"])
	assert.Equal(t, [][]int{{4, 6}, {5, 7}}, fromJSON.Modules[1].Groups["embd"])
	assert.Equal(t, [][]int{{4}, {5}}, fromJSON.Modules[1].Groups["pos_embd"])

	rows, err := csv.NewReader(strings.NewReader(run(t, tp, render.Options{Format: "csv"}))).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"module", "group", "index", "size", "ranks"}, rows[0])
	fromCSV := map[string][][]int{}
	for _, r := range rows[1:] {
		var g []int
		for _, f := range strings.Fields(r[4]) {
			var x int
			_, err := fmtSscan(f, &x)
			require.NoError(t, err)
			g = append(g, x)
		}
		fromCSV[r[0]+"/"+r[1]] = append(fromCSV[r[0]+"/"+r[1]], g)
	}
	for _, m := range fromJSON.Modules {
		for k, gs := range m.Groups {
			assert.Equal(t, gs, fromCSV[m.Name+"/"+k], "%s/%s", m.Name, k)
		}
	}
}

func TestFilters(t *testing.T) {
	tp := topo(t, twoNode)
	var got planJSON
	require.NoError(t, json.Unmarshal([]byte(run(t, tp, render.Options{Format: "json", Modules: []string{"language"}, Groups: []string{"tp", "pp"}})), &got))
	require.Len(t, got.Modules, 1)
	assert.Equal(t, "language", got.Modules[0].Name)
	assert.Equal(t, map[string][][]int{"tp": {{4, 5}, {6, 7}}, "pp": {{4, 6}, {5, 7}}}, got.Modules[0].Groups)

	for _, o := range []render.Options{
		{Format: "json", Modules: []string{"audio"}},
		{Format: "json", Groups: []string{"tensor"}},
		{Format: "json", Rank: 8, HasRank: true},
		{Format: "json", Rank: -1, HasRank: true},
		{Format: "xml"},
	} {
		err := render.Render(&bytes.Buffer{}, tp, o)
		var ue *render.UsageError
		assert.ErrorAs(t, err, &ue, "%+v", o)
	}
}

func TestRank(t *testing.T) {
	tp := topo(t, twoNode)
	var got struct {
		Rank     int  `json:"rank"`
		Node     *int `json:"node"`
		LocalGPU *int `json:"local_gpu"`
		Modules  []struct {
			Name   string           `json:"name"`
			Coords map[string]int   `json:"coords"`
			Last   bool             `json:"last_pp_stage"`
			First  bool             `json:"first_pp_stage"`
			Groups map[string][]int `json:"groups"`
		} `json:"modules"`
	}
	require.NoError(t, json.Unmarshal([]byte(run(t, tp, render.Options{Format: "json", Rank: 7, HasRank: true})), &got))
	assert.Equal(t, 7, got.Rank)
	require.NotNil(t, got.Node)
	assert.Equal(t, 1, *got.Node)
	assert.Equal(t, 3, *got.LocalGPU)
	require.Len(t, got.Modules, 1)
	m := got.Modules[0]
	assert.Equal(t, "language", m.Name)
	assert.Equal(t, 1, m.Coords["tp"])
	assert.Equal(t, 1, m.Coords["pp"])
	assert.True(t, m.Last)
	assert.False(t, m.First)
	assert.Equal(t, []int{6, 7}, m.Groups["tp"])
	assert.Equal(t, []int{5, 7}, m.Groups["pp"])
	assert.Equal(t, []int{5, 7}, m.Groups["embd"])
	assert.NotContains(t, m.Groups, "pos_embd", "rank 7 is on the last stage, not in the position-embedding group")

	var y map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(run(t, tp, render.Options{Format: "yaml", Rank: 7, HasRank: true})), &y))
	assert.Equal(t, 7, y["rank"])

	table := run(t, tp, render.Options{Format: "table", Rank: 7, HasRank: true})
	assert.Contains(t, table, "rank 7 (node 1, local GPU 3)")
	assert.Contains(t, table, "(last pp stage)")
}

func TestByRank(t *testing.T) {
	tp := topo(t, twoNode)
	rows, err := csv.NewReader(strings.NewReader(run(t, tp, render.Options{Format: "csv", ByRank: true}))).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 9)
	assert.Equal(t, []string{"rank", "node", "local_gpu", "module", "tp", "gtp_remat", "cp", "dp", "pp", "expt_tp", "ep", "expt_gtp_remat", "expt_dp", "first_pp_stage", "last_pp_stage"}, rows[0])
	assert.Equal(t, []string{"6", "1", "2", "language", "0", "0", "0", "0", "1", "0", "0", "0", "0", "false", "true"}, rows[7])

	var j struct {
		Ranks []map[string]any `json:"ranks"`
	}
	require.NoError(t, json.Unmarshal([]byte(run(t, tp, render.Options{Format: "json", ByRank: true})), &j))
	require.Len(t, j.Ranks, 8)
	assert.Equal(t, "vision", j.Ranks[1]["module"])

	var y struct {
		Ranks []map[string]any `yaml:"ranks"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(run(t, tp, render.Options{Format: "yaml", ByRank: true})), &y))
	assert.Len(t, y.Ranks, 8)
	assert.Equal(t, 1, y.Ranks[5]["node"])

	// Colocated ranks get one row per module.
	colo := topo(t, "version: 1\nworld_size: 4\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, rank_offset: 0, tp: 2}\n")
	rows, err = csv.NewReader(strings.NewReader(run(t, colo, render.Options{Format: "csv", ByRank: true}))).ReadAll()
	require.NoError(t, err)
	assert.Len(t, rows, 9)
	assert.Equal(t, "", rows[1][1], "no cluster: node is unknown")
}

// A 131,072-rank world must stay readable in a table: group lists fold.
func TestTableFolds(t *testing.T) {
	tp := topo(t, `version: 1
cluster: {nodes: 16384, gpus_per_node: 8}
modules:
  - {name: vision, num_ranks: 16384, tp: 4}
  - {name: language, num_ranks: 114688, tp: 8, cp: 2, pp: 14, ep: 64}
`)
	out := run(t, tp, render.Options{Format: "table"})
	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, len([]rune(line)), 140, "line too wide: %q", line)
	}
	assert.Regexp(t, `tp +│ 4096 +│ 4 +│ \[0 1 2 3\] .* \.\.\. and \d+ more`, out)
	assert.Contains(t, out, "... 131071 (114688 ranks)]") // intra_dist_opt, folded members
	byRank := run(t, tp, render.Options{Format: "table", ByRank: true})
	assert.Contains(t, byRank, "... and 131008 more rows (--full shows all)")

	md := run(t, topo(t, twoNode), render.Options{Format: "markdown", Full: true})
	assert.Contains(t, md, "| tp ")
	assert.Contains(t, md, "[4 5]")
}

// --full tables list every group and every rank. A group longer than a
// line goes on over continuation rows, so that no row is padded to the
// widest group: the table grows with the ranks, not with their square.
func TestFullTableWraps(t *testing.T) {
	tp := topo(t, `version: 1
cluster: {nodes: 64, gpus_per_node: 8}
modules:
  - {name: vision, num_ranks: 256, tp: 4}
  - {name: language, num_ranks: 256, tp: 8, pp: 4, ep: 8}
`)
	for _, format := range []string{"table", "markdown"} {
		out := run(t, tp, render.Options{Format: format, Full: true, Modules: []string{"language"}})
		assert.NotContains(t, out, "…", "a streamed cell was truncated")
		widest := 0
		for _, line := range strings.Split(out, "\n") {
			widest = max(widest, len([]rune(line)))
		}
		assert.LessOrEqual(t, widest, 160, format)

		// Put the groups back together from the rows: a row with a group
		// kind starts a group, a row without one continues it.
		sep := "│"
		if format == "markdown" {
			sep = "|"
		}
		got := map[string][][]int{}
		var kind string
		for _, line := range strings.Split(out, "\n") {
			cells := strings.Split(line, sep)
			if len(cells) != 6 || strings.Contains(line, "group") || strings.HasPrefix(strings.TrimSpace(cells[1]), ":-") {
				continue
			}
			text := strings.Trim(strings.TrimSpace(cells[4]), "[]")
			var ranks []int
			for _, f := range strings.Fields(text) {
				var r int
				_, err := fmtSscan(f, &r)
				require.NoError(t, err, line)
				ranks = append(ranks, r)
			}
			if k := strings.TrimSpace(cells[1]); k != "" {
				kind = k
				got[kind] = append(got[kind], ranks)
			} else {
				g := got[kind]
				g[len(g)-1] = append(g[len(g)-1], ranks...)
			}
		}
		var want planJSON
		require.NoError(t, json.Unmarshal([]byte(run(t, tp, render.Options{Format: "json", Modules: []string{"language"}})), &want))
		assert.Equal(t, want.Modules[0].Groups, got, format)
		assert.Len(t, got["intra_dist_opt"][0], 256)
	}

	rank := run(t, tp, render.Options{Format: "table", Full: true, Rank: 300, HasRank: true})
	assert.NotContains(t, rank, "…")
	assert.Regexp(t, `│ intra_dist_opt +│ 0 +│ 256 +│ \[256 257 258 .* 279 │\n│ +│ +│ +│ 280 281 `, rank)

	byRank := run(t, tp, render.Options{Format: "table", Full: true, ByRank: true})
	assert.NotContains(t, byRank, "…")
	// Rank 511 is the last of language (tp 8, pp 4, dp 8; ep 8, expt_dp 8):
	// local rank 255 = tp 7 + 8*(dp 7) + 64*(pp 3), = ep 7 + 8*(expt_dp 7) + 64*(pp 3).
	lines := strings.Split(strings.TrimSuffix(byRank, "\n"), "\n")
	require.Len(t, lines, 512+4, "a row per rank, a header and three rules")
	var last []string
	for _, c := range strings.Split(lines[len(lines)-2], "│")[1:16] {
		last = append(last, strings.TrimSpace(c))
	}
	assert.Equal(t, []string{"511", "63", "7", "language", "7", "0", "0", "7", "3", "0", "7", "0", "7", "false", "true"}, last)
}

// A layout's name is free text; in a table heading it must not move the
// cursor or clear the screen.
func TestTitleIsInert(t *testing.T) {
	for name, want := range map[string]string{
		`"plain name"`:   "plain name: 2 ranks",
		`"x\e[2J\ny"`:    `"x\x1b[2J\ny": 2 ranks`,
		`"tab\there"`:    `"tab\there": 2 ranks`,
		`"unicode ü ok"`: "unicode ü ok: 2 ranks",
	} {
		tp := topo(t, "version: 1\nname: "+name+"\nworld_size: 2\nmodules: [{name: language, num_ranks: 2}]\n")
		out := run(t, tp, render.Options{Format: "table"})
		assert.True(t, strings.HasPrefix(out, want), "%s: %q", name, out[:min(len(out), 40)])
		out = run(t, tp, render.Options{Format: "markdown"})
		assert.True(t, strings.HasPrefix(out, want), "%s: %q", name, out[:min(len(out), 40)])
	}
}
