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
	"github.com/mimoplan/mimoplan/internal/topo"
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

func topology(t *testing.T, src string) *topo.Topology {
	t.Helper()
	l, d := layout.Parse("t.yaml", []byte(src))
	res := validate.Check(l, d)
	require.NotNil(t, res.Topology, "the core rules must pass: %+v", res.Diags.Items)
	return res.Topology
}

func run(t *testing.T, tp *topo.Topology, o render.Options) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, render.Render(&b, tp, o))
	return b.String()
}

// The YAML and CSV forms must carry exactly the groups of the JSON form.
func TestFormatsAgree(t *testing.T) {
	tp := topology(t, twoNode)
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
	tp := topology(t, twoNode)
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
	tp := topology(t, twoNode)
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

	table := run(t, tp, render.Options{Format: "text", Rank: 7, HasRank: true})
	assert.Contains(t, table, "rank 7 (node 1, local GPU 3)")
	assert.Contains(t, table, "(last pp stage)")
}

func TestByRank(t *testing.T) {
	tp := topology(t, twoNode)
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
	colo := topology(t, "version: 1\nworld_size: 4\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, rank_offset: 0, tp: 2}\n")
	rows, err = csv.NewReader(strings.NewReader(run(t, colo, render.Options{Format: "csv", ByRank: true}))).ReadAll()
	require.NoError(t, err)
	assert.Len(t, rows, 9)
	assert.Equal(t, "", rows[1][1], "no cluster: node is unknown")
}

// A layout's name is free text; in a table heading it must not move the
// cursor or clear the screen, start a CI workflow command, or (in
// Markdown) open HTML or a link.
func TestTitleIsInert(t *testing.T) {
	for name, want := range map[string][2]string{
		`"plain name"`:                   {"plain name: 2 ranks", "plain name: 2 ranks"},
		`"x\e[2J\ny"`:                    {`"x\x1b[2J\ny": 2 ranks`, `\"x\\x1b\[2J\\ny\": 2 ranks`},
		`"tab\there"`:                    {`"tab\there": 2 ranks`, `\"tab\\there\": 2 ranks`},
		`"unicode ü ok"`:                 {"unicode ü ok: 2 ranks", "unicode ü ok: 2 ranks"},
		`"::error title=INJ::x"`:         {`":\x3aerror title=INJ:\x3ax": 2 ranks`, `\"\:\\x3aerror title\=INJ\:\\x3ax\": 2 ranks`},
		`"<img src=x onerror=alert(1)>"`: {"<img src=x onerror=alert(1)>: 2 ranks", `\<img src\=x onerror\=alert\(1\)\>: 2 ranks`},
	} {
		tp := topology(t, "version: 1\nname: "+name+"\nworld_size: 2\nmodules: [{name: language, num_ranks: 2}]\n")
		out := run(t, tp, render.Options{Format: "text"})
		assert.True(t, strings.HasPrefix(out, want[0]), "%s: %q", name, out[:min(len(out), 60)])
		out = run(t, tp, render.Options{Format: "markdown"})
		assert.True(t, strings.HasPrefix(out, want[1]), "%s: %q", name, out[:min(len(out), 60)])
	}
}
