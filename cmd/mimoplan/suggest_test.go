package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every candidate suggest prints is a layout validate accepts: write each
// of --all's candidates with --out's writer path (the best is written by
// the command itself) and read it back with validate.
func TestSuggestOutRoundTrip(t *testing.T) {
	for _, spec := range []string{"../../testdata/suggest/vlm-16gpu.yaml", "../../testdata/suggest/three-8gpu.yaml"} {
		out := filepath.Join(t.TempDir(), "layout.yaml")
		code, stdout, stderr := mimoplan(t, "suggest", spec, "--top", "3", "--out", out)
		require.Equal(t, 0, code, stdout+stderr)
		code, stdout, stderr = mimoplan(t, "validate", out)
		assert.Equal(t, 0, code, "validate %s: %s%s", out, stdout, stderr)
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Contains(t, string(data), "# Written by mimoplan suggest. Estimated step")
		assert.NotContains(t, string(data), "max_tp")
	}
}

func TestSuggestJSONShape(t *testing.T) {
	code, stdout, stderr := mimoplan(t, "suggest", "../../testdata/suggest/vlm-16gpu.yaml", "--all", "--format", "json")
	require.Equal(t, 0, code, stderr)
	var got struct {
		Candidates []struct {
			Score   map[string]any   `json:"score"`
			Modules []map[string]any `json:"modules"`
		} `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.NotEmpty(t, got.Candidates)
	for _, k := range []string{"name", "rank_offset", "num_ranks", "tp", "gtp_remat", "cp", "pp", "vpp", "dp", "ep", "expt_tp", "expt_gtp_remat"} {
		assert.Contains(t, got.Candidates[0].Modules[0], k)
	}
	assert.Contains(t, got.Candidates[0].Score, "step_s")
	code, top, _ := mimoplan(t, "suggest", "../../testdata/suggest/vlm-16gpu.yaml", "--format", "json")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(top), &got))
	assert.Len(t, got.Candidates, 5)
}

func TestSuggestNothingFits(t *testing.T) {
	// Megatron-LM's example wants the encoder first with pp 1, and this
	// spec fixes its pp at 2.
	p := writeLayout(t, "version: 1\ntarget: megatron-lm\nworld_size: 4\nmodules:\n  - {name: vision, pp: 2}\n  - {name: language}\n")
	code, stdout, _ := mimoplan(t, "suggest", p)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "no layout fits; the closest misses:")
	assert.Contains(t, stdout, "encoder-parallelism-unsupported")
	code, stdout, _ = mimoplan(t, "suggest", p, "--format", "json")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, `"candidates":[]`)
	assert.Contains(t, stdout, `"blocks"`)
}

func TestSuggestBadInput(t *testing.T) {
	bad := writeLayout(t, "version: 1\nworld_size: 4\nmodules:\n  - {name: language, max_tp: 0}\n")
	code, _, stderr := mimoplan(t, "suggest", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, ":4:30: error: module \"language\": max_tp must be at least 1")
	code, _, stderr = mimoplan(t, "suggest", bad, "--gpu", "A100")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `invalid --gpu "A100"`)
	code, _, _ = mimoplan(t, "suggest", filepath.Join(t.TempDir(), "none.yaml"))
	assert.Equal(t, 2, code)
	code, _, stderr = mimoplan(t, "suggest", bad, "--efficiency", "2")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "efficiency must be at most 1")
}
