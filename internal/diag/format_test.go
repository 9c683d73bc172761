package diag_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
)

func TestWriteText(t *testing.T) {
	l := &diag.List{File: "layout.yaml"}
	l.Add("dense-not-divisible", diag.Pos{Line: 4, Column: 29}, "vision", "make num_ranks a multiple of 4", "num_ranks 6 is not divisible by %d", 4)
	l.Add("group-crosses-node", diag.Pos{Line: 7, Column: 5}, "language", "", "1 of 1 tp groups span nodes")
	l.Add("world-gap", diag.Pos{Line: 2}, "", "extend a module", "rank 7 belongs to no module")
	l.Add("gpu-mixed-models", diag.Pos{}, "", "", "the visible GPUs are of 2 models")
	var b bytes.Buffer
	require.NoError(t, diag.WriteText(&b, l))
	assert.Equal(t, `layout.yaml:4:29: error: module "vision": num_ranks 6 is not divisible by 4 [dense-not-divisible]
    hint: make num_ranks a multiple of 4
layout.yaml:7:5: warning: module "language": 1 of 1 tp groups span nodes [group-crosses-node]
layout.yaml:2: error: rank 7 belongs to no module [world-gap]
    hint: extend a module
layout.yaml: error: the visible GPUs are of 2 models [gpu-mixed-models]
`, b.String())
}

// The JSON report has exactly the keys of issue #2, in every case: module
// and line/column are there even when empty; hint is an addition, present
// when there is one.
func TestWriteJSONKeys(t *testing.T) {
	l := &diag.List{File: "a.yaml"}
	l.Add("world-gap", diag.Pos{Line: 2, Column: 13}, "", "extend a module", "rank 7 belongs to no module")
	l.Add("group-crosses-node", diag.Pos{Line: 7, Column: 5}, "language", "", "1 of 1 tp groups span nodes")
	l.Add("gpu-mixed-models", diag.Pos{}, "", "", "two models")
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	for _, tt := range []struct {
		strict         bool
		valid          bool
		errors, warned int
	}{{false, false, 2, 1}, {true, false, 2, 1}} {
		var b bytes.Buffer
		require.NoError(t, diag.WriteJSON(&b, diag.NewReport(l, tt.strict)))
		assert.Equal(t, 1, bytes.Count(b.Bytes(), []byte("\n")), "one line per file (JSON Lines)")
		var r map[string]any
		require.NoError(t, json.Unmarshal(b.Bytes(), &r))
		assert.Equal(t, []string{"diagnostics", "errors", "file", "valid", "warnings"}, keys(r))
		assert.Equal(t, "a.yaml", r["file"])
		assert.Equal(t, tt.valid, r["valid"])
		assert.Equal(t, float64(tt.errors), r["errors"])
		assert.Equal(t, float64(tt.warned), r["warnings"])
		ds := r["diagnostics"].([]any)
		require.Len(t, ds, 3)
		assert.Equal(t, []string{"column", "hint", "line", "message", "module", "rule", "severity"}, keys(ds[0].(map[string]any)))
		assert.Equal(t, []string{"column", "line", "message", "module", "rule", "severity"}, keys(ds[1].(map[string]any)))
		assert.Equal(t, map[string]any{"rule": "gpu-mixed-models", "severity": "error", "message": "two models", "line": float64(0), "column": float64(0), "module": ""}, ds[2])
	}

	// Warnings alone: valid unless strict; no diagnostics is [], not null.
	w := &diag.List{File: "w.yaml"}
	w.Add("group-crosses-node", diag.Pos{Line: 1, Column: 1}, "language", "", "crosses")
	for strict, valid := range map[bool]bool{false: true, true: false} {
		assert.Equal(t, valid, diag.NewReport(w, strict).Valid, "strict %v", strict)
	}
	var b bytes.Buffer
	require.NoError(t, diag.WriteJSON(&b, diag.NewReport(&diag.List{File: "ok.yaml"}, false)))
	assert.JSONEq(t, `{"file":"ok.yaml","valid":true,"errors":0,"warnings":0,"diagnostics":[]}`, b.String())
}
