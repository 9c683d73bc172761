package validate_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// colocatedCase is one case of scripts/gen-colocated-fixtures.py: a
// colocated layout and what Megatron-core's own code did with it.
type colocatedCase struct {
	Name           string `json:"name"`
	LayoutText     string `json:"layout_text"`
	GridMapAccepts bool   `json:"grid_map_accepts"`
	GridMapError   string `json:"grid_map_error"`
	GlobalGroups   bool   `json:"global_groups"`
	NoGridMapRuns  bool   `json:"no_grid_map_runs"`
}

// TestColocatedFixture: colocated-pp-cp-unsupported refuses a layout
// exactly when neither of MimoModel's colocated paths runs it: the grid-map
// path, whose ColocatedBridgeCommunicator upstream's own code ran on the
// layout's grids, and the path without a grid map (every module on the
// global groups, pp 1). Where it refuses, it names what upstream named.
func TestColocatedFixture(t *testing.T) {
	raw, err := os.ReadFile("testdata/colocated/communicator.json")
	require.NoError(t, err)
	var fx struct {
		Commit string          `json:"megatron_lm_commit"`
		Cases  []colocatedCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &fx))
	require.Equal(t, "d98e8a64ddf34856e74b24714e3bedb2f5a39553", fx.Commit)
	require.NotEmpty(t, fx.Cases)
	refused := 0
	for _, c := range fx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			l, d := layout.Parse("layout.yaml", []byte(c.LayoutText))
			res := validate.Check(l, d)
			var fields []string
			for _, x := range res.Diags.Items {
				if x.Rule == string(diag.RuleColocatedPPCPUnsupported) {
					fields = append(fields, strings.Fields(x.Message)[0])
				} else {
					t.Errorf("another rule: %s: %s", x.Rule, x.Message)
				}
			}
			runs := c.GridMapAccepts || c.NoGridMapRuns
			assert.Equal(t, !runs, len(fields) > 0, "upstream runs it: %v; mimoplan: %v", runs, fields)
			if runs {
				return
			}
			refused++
			// Upstream's first refusal ("src PP must be 1 ...") is among
			// mimoplan's.
			named := strings.ToLower(strings.Fields(c.GridMapError)[1])
			assert.Contains(t, fields, named, c.GridMapError)
		})
	}
	assert.Positive(t, refused)
}
