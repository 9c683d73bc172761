package grid_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

type goldenLayout struct {
	WorldSize int `yaml:"world_size"`
	Modules   []struct {
		Name         string `yaml:"name"`
		NumRanks     int    `yaml:"num_ranks"`
		RankOffset   int    `yaml:"rank_offset"`
		TP           int    `yaml:"tp"`
		GTPRemat     int    `yaml:"gtp_remat"`
		CP           int    `yaml:"cp"`
		PP           int    `yaml:"pp"`
		EP           int    `yaml:"ep"`
		ExptTP       int    `yaml:"expt_tp"`
		ExptGTPRemat int    `yaml:"expt_gtp_remat"`
	} `yaml:"modules"`
}

type goldenExpected struct {
	Modules []struct {
		Name   string             `json:"name"`
		DP     int                `json:"dp"`
		ExptDP int                `json:"expt_dp"`
		Groups map[string][][]int `json:"groups"`
	} `json:"modules"`
}

func or1(v int) int {
	if v == 0 {
		return 1
	}
	return v
}

// TestGolden compares every group of every golden layout, member for
// member, with what Megatron's own HyperCommGrid produced. It reads the
// golden YAML directly so that it tests the grid port alone; the layout
// parser has its own golden test through render.
func TestGolden(t *testing.T) {
	dir := testutil.GoldenDir()
	files := testutil.GoldenLayouts(t, "*.yaml")
	t.Logf("golden dir %s: %d layouts", dir, len(files))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			var l goldenLayout
			require.NoError(t, yaml.Unmarshal(raw, &l))
			raw, err = os.ReadFile(filepath.Join(dir, "expected", name+".json"))
			require.NoError(t, err)
			var want goldenExpected
			require.NoError(t, json.Unmarshal(raw, &want))
			require.Len(t, want.Modules, len(l.Modules))
			for i, ms := range l.Modules {
				m, err := grid.NewModule(grid.Spec{
					Name: ms.Name, RankOffset: ms.RankOffset, NumRanks: ms.NumRanks,
					TP: or1(ms.TP), GTPRemat: or1(ms.GTPRemat), CP: or1(ms.CP), PP: or1(ms.PP),
					EP: or1(ms.EP), ExptTP: or1(ms.ExptTP), ExptGTPRemat: or1(ms.ExptGTPRemat),
				}, l.WorldSize)
				require.NoError(t, err)
				w := want.Modules[i]
				assert.Equal(t, w.Name, m.Name)
				assert.Equal(t, w.DP, m.DP, "dp")
				assert.Equal(t, w.ExptDP, m.ExptDP, "expt_dp")
				got := map[string][][]int{}
				for _, g := range m.Groups {
					got[g.Kind] = g.Enum.Groups()
				}
				assert.Equal(t, w.Groups, got, "module %s", m.Name)
			}
		})
	}
}
