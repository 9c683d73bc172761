package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiffExitCodes(t *testing.T) {
	g := writeLayout(t, good)
	wider := writeLayout(t, strings.Replace(good, "{name: vision, num_ranks: 4, tp: 2}", "{name: vision, num_ranks: 4, tp: 4}", 1))
	b := writeLayout(t, bad)
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"identical", []string{"diff", g, g}, 0, "groups identical", ""},
		{"differ", []string{"diff", g, wider}, 1, "groups differ: 6 group kinds change in 1 module", ""},
		{"json", []string{"diff", g, wider, "--format", "json"}, 1, `"identical_groups": false`, ""},
		{"one arg", []string{"diff", g}, 2, "", "accepts 2 arg(s)"},
		{"bad format", []string{"diff", g, g, "--format", "html"}, 2, "", `invalid --format "html"`},
		{"missing", []string{"diff", g, filepath.Join(t.TempDir(), "no.yaml")}, 2, "", "no such file"},
		{"invalid layout", []string{"diff", b, g}, 2, "", "fails the core rules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := mimoplan(t, tt.args...)
			assert.Equal(t, tt.code, code, "stdout: %s\nstderr: %s", out, errOut)
			assert.Contains(t, out, tt.out)
			assert.Contains(t, errOut, tt.err)
		})
	}
	_, out, errOut := mimoplan(t, "diff", b, g)
	assert.Empty(t, out)
	assert.Contains(t, errOut, `error: module "vision"`, "the layout's problems are printed")

	_, out, _ = mimoplan(t, "diff", g, wider, "--format", "json")
	var j map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	assert.Equal(t, false, j["identical_groups"])
}
