package render_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

type planJSON struct {
	Version   int    `json:"version"`
	Name      string `json:"name"`
	WorldSize int    `json:"world_size"`
	Mode      string `json:"mode"`
	Modules   []struct {
		Name       string             `json:"name"`
		RankOffset int                `json:"rank_offset"`
		NumRanks   int                `json:"num_ranks"`
		DP         int                `json:"dp"`
		ExptDP     int                `json:"expt_dp"`
		Groups     map[string][][]int `json:"groups"`
	} `json:"modules"`
}

// TestGoldenPipeline runs each golden layout through the whole path a user
// takes (parse, validate, render --format json) and compares every group
// with what Megatron's HyperCommGrid produced.
func TestGoldenPipeline(t *testing.T) {
	dir := testutil.GoldenDir()
	for _, f := range testutil.GoldenLayouts(t, "*.yaml") {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			res, err := validate.Load(f)
			require.NoError(t, err)
			// The goldens are valid HyperCommGrid layouts, not always ones a
			// MIMO communicator can run (cp > 1 across a bridge, say): render
			// needs only the core rules to pass.
			require.NotNil(t, res.Topology, "golden layout must pass the core rules: %+v", res.Diags.Items)
			var buf bytes.Buffer
			require.NoError(t, render.JSON(&buf, res.Topology))
			var got planJSON
			require.NoError(t, json.Unmarshal(buf.Bytes(), &got), "render JSON must parse")

			raw, err := os.ReadFile(filepath.Join(dir, "expected", name+".json"))
			require.NoError(t, err)
			var want planJSON
			require.NoError(t, json.Unmarshal(raw, &want))

			assert.Equal(t, 1, got.Version)
			assert.Equal(t, want.WorldSize, got.WorldSize)
			require.Len(t, got.Modules, len(want.Modules))
			for i, w := range want.Modules {
				g := got.Modules[i]
				assert.Equal(t, w.Name, g.Name)
				assert.Equal(t, w.DP, g.DP, "%s dp", w.Name)
				assert.Equal(t, w.ExptDP, g.ExptDP, "%s expt_dp", w.Name)
				assert.Equal(t, w.Groups, g.Groups, "%s groups", w.Name)
			}
		})
	}
}
