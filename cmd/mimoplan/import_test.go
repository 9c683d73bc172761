package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestImportCommands(t *testing.T) {
	mlm := writeLayout(t, megatronLM)
	code, out, stderr := mimoplan(t, "launch-plan", mlm, "--format", "json", "--target-version", "6570")
	require.Equal(t, 0, code, stderr)
	var plan struct {
		Nodes []struct {
			Command []string `json:"command"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &plan))
	dir := t.TempDir()
	imported := filepath.Join(dir, "imported.yaml")
	code, _, stderr = mimoplan(t, append([]string{"import", "megatron-lm", "--name", "again", "--out", imported, "--"}, plan.Nodes[0].Command...)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "wrote the layout to "+imported)
	// The imported layout launches the same argv.
	code, out2, stderr := mimoplan(t, "launch-plan", imported, "--format", "json")
	require.Equal(t, 0, code, stderr)
	var plan2 struct {
		Nodes []struct {
			Command []string `json:"command"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out2), &plan2))
	assert.Equal(t, plan.Nodes[0].Command, plan2.Nodes[0].Command)

	script := filepath.Join(dir, "run.sh")
	require.NoError(t, os.WriteFile(script, []byte("export MIMO_LLM_TP=2 MIMO_LLM_PP=1 MIMO_LLM_DP=2 MIMO_LLM_OFFSET=0\nMIMO_VISION_TP=2 MIMO_VISION_PP=1 MIMO_VISION_DP=2 MIMO_VISION_OFFSET=4 torchrun llava.py\n"), 0o644))
	code, out, stderr = mimoplan(t, "import", "bridge-env", "--from-script", script)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "target: megatron-bridge\nworld_size: 8\n")

	t.Setenv("MIMO_LLM_TP", "4")
	for _, s := range []string{"PP=1", "DP=1", "OFFSET=0"} {
		k, v, _ := strings.Cut(s, "=")
		t.Setenv("MIMO_LLM_"+k, v)
	}
	code, out, stderr = mimoplan(t, "import", "bridge-env")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "  - name: language\n    num_ranks: 4\n    rank_offset: 0\n    tp: 4\n")

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", "megatron-lm"}, 2, "takes the launch's argv after --"},
		{[]string{"import", "megatron-lm", "--", "--llm-tp", "2", "--mimo-llm-dp", "2"}, 2, "mixes the plain grid names"},
		{[]string{"import", "megatron-lm", "--", "--llm-tp", "3", "--llm-offset", "2"}, 1, "[span-overlap]"},
		{[]string{"import", "bridge-env", "--from-script", filepath.Join(dir, "none.sh")}, 2, "no such file"},
		{[]string{"import", "bridge-env", "--from-script", mlm}, 2, "no MIMO_"},
	} {
		code, _, stderr := mimoplan(t, tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, tc.args)
	}
}
