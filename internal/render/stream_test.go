package render_test

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func goldenTopologies(t *testing.T) map[string]*topo.Topology {
	t.Helper()
	out := map[string]*topo.Topology{}
	for _, f := range append(testutil.GoldenLayouts(t, "*.yaml"), testutil.Layouts(t, "*-*gpu.yaml")...) {
		res, err := validate.Load(f)
		require.NoError(t, err)
		require.NotNil(t, res.Topology, f)
		out[filepath.Base(f)] = res.Topology
	}
	require.NotEmpty(t, out)
	return out
}

func sizesOf(m *grid.Module) []int {
	return []int{m.RankOffset, m.NumRanks, m.TP, m.GTPRemat, m.CP, m.PP, m.DP, m.EP, m.ExptTP, m.ExptGTPRemat, m.ExptDP}
}

var sizeKeys = []string{"rank_offset", "num_ranks", "tp", "gtp_remat", "cp", "pp", "dp", "ep", "expt_tp", "expt_gtp_remat", "expt_dp"}

// materialised builds the group forms the slow way, every group stored and
// marshalled by encoding/json, as the oracle of the streamed ones.
func materialised(t *testing.T, top *topo.Topology, format string) string {
	var b strings.Builder
	name, err := json.Marshal(top.Name)
	require.NoError(t, err)
	switch format {
	case "json":
		fmt.Fprintf(&b, `{"version":1,"name":%s,"world_size":%d,"mode":"%s","modules":[`, name, top.WorldSize, top.Mode)
		for i, m := range top.Modules {
			if i > 0 {
				b.WriteString(",")
			}
			mn, _ := json.Marshal(m.Name)
			fmt.Fprintf(&b, `{"name":%s`, mn)
			for j, v := range sizesOf(m) {
				fmt.Fprintf(&b, `,"%s":%d`, sizeKeys[j], v)
			}
			b.WriteString(`,"groups":{`)
			for j, g := range m.Groups {
				gs, err := json.Marshal(g.Enum.Groups())
				require.NoError(t, err)
				if j > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `"%s":%s`, g.Kind, gs)
			}
			b.WriteString("}}")
		}
		b.WriteString("]}\n")
	case "yaml":
		fmt.Fprintf(&b, "version: 1\nname: %s\nworld_size: %d\nmode: %s\nmodules:\n", name, top.WorldSize, top.Mode)
		for _, m := range top.Modules {
			mn, _ := json.Marshal(m.Name)
			fmt.Fprintf(&b, "  - name: %s\n", mn)
			for j, v := range sizesOf(m) {
				fmt.Fprintf(&b, "    %s: %d\n", sizeKeys[j], v)
			}
			b.WriteString("    groups:\n")
			for _, g := range m.Groups {
				gs, err := json.Marshal(g.Enum.Groups())
				require.NoError(t, err)
				fmt.Fprintf(&b, "      %s: %s\n", g.Kind, strings.ReplaceAll(string(gs), ",", ", "))
			}
		}
	case "csv":
		b.WriteString("module,group,index,size,ranks\n")
		for _, m := range top.Modules {
			for _, g := range m.Groups {
				for i, grp := range g.Enum.Groups() {
					ranks := make([]string, len(grp))
					for k, r := range grp {
						ranks[k] = strconv.Itoa(r)
					}
					fmt.Fprintf(&b, "%s,%s,%d,%d,%s\n", m.Name, g.Kind, i, len(grp), strings.Join(ranks, " "))
				}
			}
		}
	}
	return b.String()
}

// The streamed forms are byte for byte what storing every group and
// marshalling it gives.
func TestStreamMatchesMaterialised(t *testing.T) {
	for name, top := range goldenTopologies(t) {
		for _, format := range []string{"json", "yaml", "csv"} {
			require.Equal(t, materialised(t, top, format), run(t, top, render.Options{Format: format}), "%s %s", name, format)
		}
	}
}

// Every --by rank row carries the grid's own coordinates of its rank in
// both views, its placement and its stage flags; colocated ranks have a
// row per module, in layout order.
func TestByRankCoordinates(t *testing.T) {
	for name, top := range goldenTopologies(t) {
		rows, err := csv.NewReader(strings.NewReader(run(t, top, render.Options{Format: "csv", ByRank: true}))).ReadAll()
		require.NoError(t, err)
		k := 1
		for r := range top.WorldSize {
			for _, m := range top.Modules {
				if !m.Grid.Contains(r) {
					continue
				}
				_, base, err := m.Grid.Coords(r, grid.BaseView)
				require.NoError(t, err)
				_, expt, err := m.Grid.Coords(r, grid.ExpertView)
				require.NoError(t, err)
				want := []string{strconv.Itoa(r), "", "", m.Name}
				if top.Cluster != nil {
					want[1], want[2] = strconv.Itoa(r/top.Cluster.GPUsPerNode), strconv.Itoa(r%top.Cluster.GPUsPerNode)
				}
				for _, v := range append(base, expt[:4]...) {
					want = append(want, strconv.Itoa(v))
				}
				want = append(want, strconv.FormatBool(base[4] == 0), strconv.FormatBool(base[4] == m.PP-1))
				require.Less(t, k, len(rows), name)
				require.Equal(t, want, rows[k], "%s rank %d module %s", name, r, m.Name)
				k++
			}
		}
		assert.Len(t, rows, k, name)
	}
}

// failAfter fails every write after the first n bytes.
type failAfter struct {
	n, writes int
}

var errFull = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	f.writes++
	if len(p) > f.n {
		return 0, errFull
	}
	f.n -= len(p)
	return len(p), nil
}

// A write error ends a streamed render with that error, and nothing is
// written after it.
func TestStreamWriteError(t *testing.T) {
	top := loadT(t, testutil.Layout("scale-131072.yaml"))
	for _, o := range []render.Options{{Format: "json"}, {Format: "csv"}, {Format: "yaml", ByRank: true}, {Format: "json", Rank: 70000, HasRank: true}} {
		w := &failAfter{n: 100 << 10}
		err := render.Render(w, top, o)
		require.ErrorIs(t, err, errFull, "%+v", o)
		if o.HasRank {
			continue // one small write in all
		}
		assert.Equal(t, 2, w.writes, "%+v: the failing write is the last", o)
	}
}

func loadT(t *testing.T, path string) *topo.Topology {
	t.Helper()
	res, err := validate.Load(path)
	require.NoError(t, err)
	require.NotNil(t, res.Topology)
	return res.Topology
}

// Rendering allocates the same few KB whatever the size of a group: the
// 1,048,576-rank layout has a 917,504-rank group (7 MB as a slice).
func TestStreamMemoryFlat(t *testing.T) {
	top := loadT(t, filepath.Join(testutil.RepoRoot(), "testdata", "scale", "scale-1048576.yaml"))
	for _, o := range []render.Options{{Format: "json"}, {Format: "csv", ByRank: true}, {Format: "yaml", Rank: 1048575, HasRank: true}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var w countingSink
		require.NoError(t, render.Render(&w, top, o))
		runtime.ReadMemStats(&after)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<10), "%+v allocated", o)
		assert.Greater(t, w.n, int64(0))
	}
}

type countingSink struct{ n int64 }

func (c *countingSink) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
