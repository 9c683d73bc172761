package render_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/validate"
)

const scale = `version: 1
cluster: {nodes: 16384, gpus_per_node: 8}
modules:
  - {name: vision, num_ranks: 16384, tp: 4}
  - {name: language, num_ranks: 114688, tp: 8, cp: 2, pp: 14, ep: 64}
`

func widest(s string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		n = max(n, utf8.RuneCountInString(line))
	}
	return n
}

// Every table form of every layout in layouts/ fits an 80-column terminal.
func TestTablesFitWidth(t *testing.T) {
	for _, f := range testutil.Layouts(t, "*.yaml") {
		res, err := validate.Load(f)
		require.NoError(t, err)
		require.NotNil(t, res.Topology, f)
		tp := res.Topology
		forms := []render.Options{
			{Format: "text"},
			{Format: "text", AllGroups: true},
			{Format: "text", ByRank: true},
			{Format: "text", Full: true, Modules: []string{tp.Modules[0].Name}, Groups: []string{"tp", "dp"}},
		}
		for _, r := range []int{0, tp.WorldSize / 2, tp.WorldSize - 1} {
			forms = append(forms, render.Options{Format: "text", Rank: r, HasRank: true})
		}
		for _, o := range forms {
			out := run(t, tp, o)
			assert.LessOrEqual(t, widest(out), 80, "%s %+v:\n%s", filepath.Base(f), o, out)
		}
		// A wider terminal gets wider tables, never wider than it.
		out := run(t, tp, render.Options{Format: "text", Width: 120})
		assert.LessOrEqual(t, widest(out), 120)
	}
}

// The default table folds singleton kinds onto one line and lists kinds
// with identical groups together; --all-groups has a row per kind.
func TestTableFoldsKinds(t *testing.T) {
	tp := topology(t, twoNode)
	out := run(t, tp, render.Options{Format: "text", Modules: []string{"vision"}})
	// vision: tp 2, dp 2 on 4 ranks, no experts.
	assert.Regexp(t, `│ tp = tp_cp = mp +│ +2 │ +2 │ +1 │ \[0 1\] \[2 3\] +│`, out)
	assert.Regexp(t, `│ dp = dp_cp = dp_cp_gtp_remat +│ +2 │ +2 │ +1 │ \[0 2\] \[1 3\] +│`, out)
	assert.Contains(t, out, "singletons: cp pp gtp_remat ep expt_tp expt_gtp_remat tp_ep tp_ep_pp")
	assert.Contains(t, out, "vision  ranks [0, 4)  node 0  tp=2 dp=2\n", "no expert sizes for a dense module")

	// Every kind appears exactly once, in a row or on the singletons line.
	for _, k := range []string{"tp", "cp", "pp", "dp", "dp_cp", "mp", "intra_dist_opt", "expt_dp", "tp_ep_pp_with_egtp_remat"} {
		assert.Len(t, regexp.MustCompile(`[ │]`+k+`[ \n]`).FindAllString(out, -1), 1, k)
	}

	all := run(t, tp, render.Options{Format: "text", Modules: []string{"vision"}, AllGroups: true})
	assert.NotContains(t, all, "singletons")
	assert.NotContains(t, all, " = ")
	assert.Regexp(t, `│ cp +│ +4 │ +1 │ +1 │ \[0\] \[1\] \[2\] \[3\] +│`, all)
	assert.Equal(t, 1+20, strings.Count(all, "\n│"), "the header and a row per kind")
}

// A folded ranks cell shows the stride of an evenly spaced group, and
// the nodes column the nodes one group spans.
func TestTableStrideAndNodes(t *testing.T) {
	tp := topology(t, scale)
	out := run(t, tp, render.Options{Format: "text", Modules: []string{"language"}, Width: 200})
	// The groups of a kind share their stride: it is said once, at the end.
	assert.Regexp(t, `│ dp +│ +224 │ +512 │ +512 │ \[16384 16400 \.\.\. 24560\] \[16385 16401 \.\.\. 24561\] .*\.\.\. \[122895 122911 \.\.\. 131071\] step 16 +│`, out)
	assert.Regexp(t, `│ pp +│ +8192 │ +14 │ +14 │ \[16384 24576 \.\.\. 122880\] [^│]* step 8192 +│`, out)
	assert.Regexp(t, `│ tp +│ +14336 │ +8 │ +1 │ \[16384-16391\] \[16392-16399\] .*\.\.\. \[131064-131071\]`, out)
	assert.Regexp(t, `│ intra_dist_opt +│ +1 │ +114688 │ +14336 │ \[16384-131071\] +│`, out)
	assert.Regexp(t, `│ cp +│ +57344 │ +2 │ +2 │`, out, "a cp pair is 8 apart: always on two nodes")
	assert.Contains(t, out, "language  ranks [16384, 131072)  nodes 2048-16383  tp=8 cp=2 pp=14 dp=512 ep=64 expt_dp=128")

	// A group that straddles a node boundary only sometimes: tp 3 on 4 GPUs.
	odd := topology(t, "version: 1\ncluster: {nodes: 3, gpus_per_node: 4}\nmodules:\n- {name: language, num_ranks: 12, tp: 3}\n")
	out = run(t, odd, render.Options{Format: "text"})
	assert.Regexp(t, `│ tp = tp_cp = mp +│ +4 │ +3 │ +1-2 │`, out)
}

// --rank labels coordinates as positions and leaves the expert line out
// of a dense module.
func TestRankPositions(t *testing.T) {
	tp := topology(t, scale)
	out := run(t, tp, render.Options{Format: "text", Rank: 70000, HasRank: true})
	// local rank 53616 = tp 0 + 8*(cp 0) + 16*(dp 279) + 8192*(pp 6);
	// expert view: ep 48 (53616/8 % 64... of tp_ep blocks of 64), expt_dp 69.
	assert.Contains(t, out, "language  tp 0/8  cp 0/2  dp 279/512  pp 6/14\n")
	assert.Contains(t, out, "experts:  ep 48/64  expt_dp 69/128\n")
	assert.Regexp(t, `│ tp +│ +6702 │ +8 │ +1 │ \[70000-70007\] +│`, out)

	dense := run(t, tp, render.Options{Format: "text", Rank: 5, HasRank: true})
	assert.Contains(t, dense, "vision  tp 1/4  dp 1/4096  pp 0/1  (only pp stage)\n")
	assert.NotContains(t, dense, "experts:")

	full := run(t, tp, render.Options{Format: "text", Rank: 70000, HasRank: true, Full: true, Groups: []string{"dp"}})
	var want []string
	for i := range 512 {
		want = append(want, strconv.Itoa(65536+16*i))
	}
	got := strings.Fields(strings.Join(cellColumn(full, 5), " "))
	assert.Equal(t, "["+strings.Join(want, " ")+"]", strings.Join(got, " "), "--full lists every member over continuation lines")
}

// cellColumn is column col (1-based, between │) of every body line of a box
// table.
func cellColumn(out string, col int) []string {
	var cells []string
	for _, line := range strings.Split(out, "\n") {
		parts := strings.Split(line, "│")
		if len(parts) < col+2 || strings.Contains(line, " group ") || strings.Contains(line, " rank ") {
			continue
		}
		cells = append(cells, strings.TrimSpace(parts[col]))
	}
	return cells
}

// --by rank pages through every rank; --group adds each rank's group of
// that kind.
func TestByRankPages(t *testing.T) {
	tp := topology(t, scale)
	first := run(t, tp, render.Options{Format: "text", ByRank: true})
	ranks := cellColumn(first, 1)
	assert.Len(t, ranks, render.DefaultPage)
	assert.Equal(t, "63", ranks[len(ranks)-1])
	assert.Contains(t, first, "ranks 0-63 of 131072 (64 rows); next: --offset 64, or --full for every rank\n")

	page := run(t, tp, render.Options{Format: "text", ByRank: true, Offset: 16382, Limit: 3, Groups: []string{"tp", "ep"}})
	assert.Equal(t, []string{"16382", "16383", "16384"}, cellColumn(page, 1))
	assert.Contains(t, page, "│ tp group │ ep group │")
	assert.Regexp(t, `│ 16383 │ +2047 │ +7 │ vision +│ +3 │ +0 │ +4095 │ +0 │ +- │ +- │ +4095 │ +16383 │`, page)
	assert.Regexp(t, `│ 16384 │ +2048 │ +0 │ language │ +0 │ +0 │ +0 │ +0 │ +0 │ +0 │ +0 │ +0 │`, page)

	// Every format pages the same ranks, with the same group indices.
	var j struct {
		Ranks []map[string]any `json:"ranks"`
	}
	require.NoError(t, json.Unmarshal([]byte(run(t, tp, render.Options{Format: "json", ByRank: true, Offset: 16382, Limit: 3, Groups: []string{"tp"}})), &j))
	require.Len(t, j.Ranks, 3)
	assert.EqualValues(t, 4095, j.Ranks[1]["tp_group"])
	csv := run(t, tp, render.Options{Format: "csv", ByRank: true, Offset: 131070, Groups: []string{"embd"}})
	assert.Equal(t, 3, strings.Count(csv, "\n"))
	assert.True(t, strings.HasSuffix(csv, ",false,true,8191\n"), csv)

	full := run(t, topology(t, twoNode), render.Options{Format: "text", ByRank: true, Full: true})
	assert.Len(t, cellColumn(full, 1), 8)
	assert.NotContains(t, full, "next:")

	for _, o := range []render.Options{
		{Format: "text", ByRank: true, Offset: 131072},
		{Format: "text", ByRank: true, Limit: -1},
		{Format: "text", ByRank: true, Full: true, Limit: 3},
		{Format: "text", Limit: 3},
	} {
		err := render.Render(&strings.Builder{}, tp, o)
		var ue *render.UsageError
		assert.ErrorAs(t, err, &ue, "%+v", o)
	}
}

// --full tables list every group and every rank, streamed: a group longer
// than the ranks column goes on over continuation rows, so that putting
// the rows back together gives the JSON form's groups.
func TestFullTable(t *testing.T) {
	tp := topology(t, `version: 1
cluster: {nodes: 64, gpus_per_node: 8}
modules:
  - {name: vision, num_ranks: 256, tp: 4}
  - {name: language, num_ranks: 256, tp: 8, pp: 4, ep: 8}
`)
	for _, format := range []string{"text", "markdown"} {
		out := run(t, tp, render.Options{Format: format, Full: true, Modules: []string{"language"}})
		if format == "text" {
			assert.LessOrEqual(t, widest(out), 80)
		}
		sep := "│"
		if format == "markdown" {
			sep = "|"
		}
		got := map[string][][]int{}
		var kind string
		for _, line := range strings.Split(out, "\n") {
			cells := strings.Split(line, sep)
			if len(cells) != 7 || strings.Contains(line, " group ") || strings.Contains(line, "---") {
				continue
			}
			var ranks []int
			for _, f := range strings.Fields(strings.Trim(strings.TrimSpace(cells[5]), "[]")) {
				r, err := strconv.Atoi(f)
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

	// The streamed writer draws the same box as tablewriter.
	byRank := run(t, tp, render.Options{Format: "text", Full: true, ByRank: true})
	lines := strings.Split(strings.TrimSuffix(byRank, "\n"), "\n")
	require.Len(t, lines, 512+4, "a row per rank, a header and three rules")
	assert.True(t, strings.HasPrefix(lines[0], "┌──────┬"), lines[0])
	assert.True(t, strings.HasPrefix(lines[2], "├──────┼"), lines[2])
	assert.True(t, strings.HasPrefix(lines[len(lines)-1], "└──────┴"), lines[len(lines)-1])
	// Rank 511 is the last of language (tp 8, pp 4, dp 8; ep 8, expt_dp 8):
	// local rank 255 = tp 7 + 8*(dp 7) + 64*(pp 3), = ep 7 + 8*(expt_dp 7) + 64*(pp 3).
	last := slices.DeleteFunc(strings.Split(lines[len(lines)-2], "│"), func(s string) bool { return s == "" })
	for i := range last {
		last[i] = strings.TrimSpace(last[i])
	}
	assert.Equal(t, []string{"511", "63", "7", "language", "7", "7", "3", "7", "7"}, last)
}

// A page of a machine format is the same rows as the whole, cut: the
// coordinates of a page that starts inside a module are found, not
// counted from its first rank.
func TestByRankPageIsSlice(t *testing.T) {
	colo := topology(t, "version: 1\nworld_size: 24\ncluster: {nodes: 3, gpus_per_node: 8}\nmodules:\n- {name: vision, num_ranks: 24, tp: 2, cp: 2}\n- {name: language, num_ranks: 24, rank_offset: 0, tp: 2, pp: 3, ep: 4}\n")
	for _, tp := range []*topo.Topology{topology(t, twoNode), colo} {
		for _, format := range []string{"csv", "yaml", "json"} {
			whole := run(t, tp, render.Options{Format: format, ByRank: true, Groups: []string{"dp", "ep"}})
			rows := func(s string) []string {
				var out []string
				switch format {
				case "json":
					var j struct {
						Ranks []json.RawMessage `json:"ranks"`
					}
					require.NoError(t, json.Unmarshal([]byte(s), &j))
					for _, r := range j.Ranks {
						out = append(out, string(r))
					}
				default:
					for _, l := range strings.Split(s, "\n") {
						if strings.HasPrefix(l, "  - {") || (format == "csv" && l != "" && !strings.HasPrefix(l, "rank,")) {
							out = append(out, l)
						}
					}
				}
				return out
			}
			all := rows(whole)
			want := tp.WorldSize // a row per rank, or per rank and module when colocated
			if tp.Mode == topo.Colocated {
				want *= len(tp.Modules)
			}
			require.Len(t, all, want, format)
			perRank := len(all) / tp.WorldSize
			for off := range tp.WorldSize {
				for _, limit := range []int{1, 3, tp.WorldSize} {
					got := rows(run(t, tp, render.Options{Format: format, ByRank: true, Groups: []string{"dp", "ep"}, Offset: off, Limit: limit}))
					end := min(off+limit, tp.WorldSize)
					require.Equal(t, all[off*perRank:end*perRank], got, "%s offset %d limit %d", format, off, limit)
				}
			}
		}
	}
}

// A colocated dense and MoE module alternate rows: the dense one's expert
// coordinates are "-", the MoE one's numbers, row after row.
func TestByRankColocatedExperts(t *testing.T) {
	colo := topology(t, "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 8, tp: 2}\n- {name: language, num_ranks: 8, rank_offset: 0, ep: 4}\n")
	out := run(t, colo, render.Options{Format: "text", ByRank: true, Full: true})
	var rows []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "│ ") && !strings.Contains(line, "rank") {
			rows = append(rows, strings.Join(strings.Fields(strings.ReplaceAll(line, "│", " ")), " "))
		}
	}
	require.Len(t, rows, 16)
	// columns: rank node gpu module tp dp pp ep expt_dp
	assert.Equal(t, "5 - - vision 1 2 0 - -", rows[10])
	assert.Equal(t, "5 - - language 0 5 0 1 1", rows[11])
	assert.Equal(t, "7 - - language 0 7 0 3 1", rows[15])
}

// Over random layouts and widths, every table line fits the width (80 and
// up), and the folded table names every group kind of a module exactly
// once, in a row or on the singletons line.
func TestTablesFitRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 13))
	pick := func(xs ...int) int { return xs[rng.IntN(len(xs))] }
	checked := 0
	for range 300 {
		world := pick(8, 16, 64, 512, 4096)
		mod := func(name string, n, off int) string {
			return fmt.Sprintf("  - {name: %s, num_ranks: %d, rank_offset: %d, tp: %d, cp: %d, pp: %d, ep: %d, gtp_remat: %d}\n",
				name, n, off, pick(1, 2, 4, 8), pick(1, 2), pick(1, 2, 4), pick(1, 2, 4, 8), pick(1, 1, 2))
		}
		src := fmt.Sprintf("version: 1\ntarget: core\nworld_size: %d\n", world)
		if rng.IntN(2) == 0 {
			src += fmt.Sprintf("cluster: {nodes: %d, gpus_per_node: 8}\n", world/8)
		}
		src += "modules:\n"
		switch rng.IntN(3) {
		case 0:
			src += mod("language", world, 0)
		case 1:
			src += mod("vision", world, 0) + mod("language", world, 0)
		default:
			src += mod("vision", world/2, 0) + mod("language", world/2, world/2)
		}
		l, d := layout.Parse("t.yaml", []byte(src))
		res := validate.Check(l, d)
		if res.Topology == nil {
			continue
		}
		checked++
		tp := res.Topology
		width := pick(80, 100, 132, 200)
		for _, o := range []render.Options{
			{Format: "text", Width: width},
			{Format: "text", Width: width, AllGroups: true},
			{Format: "text", Width: width, ByRank: true},
			{Format: "text", Width: width, Rank: rng.IntN(world), HasRank: true},
		} {
			out := run(t, tp, o)
			require.LessOrEqual(t, widest(out), width, "%+v\n%s\n%s", o, src, out)
		}
		out := run(t, tp, render.Options{Format: "text", Width: width})
		for _, m := range tp.Modules {
			section := out[strings.Index(out, "\n"+m.Name+"  ranks"):]
			if next := strings.Index(section[1:], "\n\n"); next > 0 {
				section = section[:next+1]
			}
			for _, g := range m.Groups {
				n := len(regexp.MustCompile(`[ │]`+g.Kind+`([ \n]|$)`).FindAllString(section, -1))
				require.Equal(t, 1, n, "kind %s of %s\n%s", g.Kind, m.Name, section)
			}
		}
	}
	assert.Greater(t, checked, 100)
}

// num_experts makes a module one with experts, even at ep 1: its expert
// sizes and coordinates are shown.
func TestExpertsByNumExperts(t *testing.T) {
	tp := topology(t, "version: 1\nworld_size: 4\nmodules:\n- {name: language, num_ranks: 4, tp: 2, num_experts: 8}\n")
	out := run(t, tp, render.Options{Format: "text"})
	assert.Contains(t, out, "language  ranks [0, 4)  tp=2 dp=2 expt_dp=4\n", "a dense module would leave expt_dp out")
	rank := run(t, tp, render.Options{Format: "text", Rank: 3, HasRank: true})
	assert.Contains(t, rank, "experts:  ep 0/1  expt_dp 3/4\n")
	dense := topology(t, "version: 1\nworld_size: 4\nmodules:\n- {name: language, num_ranks: 4, tp: 2}\n")
	assert.NotContains(t, run(t, dense, render.Options{Format: "text", Rank: 3, HasRank: true}), "experts:")
}
