package launch

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/upstream"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// TestBridgeVersionFixture: at each Megatron-Bridge version of the table,
// mimoplan accepts exactly the layouts Bridge's own finalize() of that
// commit accepted (scripts/gen-bridge-version-fixtures.py,
// testdata/megatron-bridge/versions.json), and for those --format bridge
// prints the Python that finalize() ran.
func TestBridgeVersionFixture(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "megatron-bridge", "versions.json"))
	require.NoError(t, err)
	var fx struct {
		Cases []struct {
			Name         string `json:"name"`
			PR           string `json:"pr"`
			BridgeCommit string `json:"bridge_commit"`
			LayoutText   string `json:"layout_text"`
			Accepts      bool   `json:"bridge_accepts"`
			Error        string `json:"bridge_error"`
			Python       string `json:"python"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &fx))
	require.NotEmpty(t, fx.Cases)
	commits := map[string]string{}
	for _, c := range upstream.Changes {
		if c.Repo == upstream.MegatronBridge {
			commits[c.Commit] = c.Merged
		}
	}
	seen := map[string]bool{}
	for _, c := range fx.Cases {
		seen[c.PR] = true
		t.Run(c.Name+"@"+c.PR, func(t *testing.T) {
			_, ok := commits[c.BridgeCommit]
			require.True(t, ok, "the fixture's commit %s is the table's for PR #%s", c.BridgeCommit, c.PR)
			l, d := layout.Parse("layout.yaml", []byte(c.LayoutText))
			res := validate.Check(l, d)
			var b strings.Builder
			require.NoError(t, diag.WriteText(&b, res.Diags))
			require.Equal(t, c.Accepts, res.Valid(false), "Bridge: %s\nmimoplan:\n%s", c.Error, b.String())
			if !c.Accepts {
				return
			}
			p := build(t, c.LayoutText, Options{NoProgram: true})
			var py bytes.Buffer
			require.NoError(t, WriteBridge(&py, p))
			assert.Equal(t, c.Python, py.String(), "the Python finalize() accepted")
		})
	}
	for _, c := range upstream.Changes {
		if c.Repo == upstream.MegatronBridge {
			assert.True(t, seen[strconv.Itoa(c.PR)], "the fixture covers Bridge PR #%d", c.PR)
		}
	}
}
