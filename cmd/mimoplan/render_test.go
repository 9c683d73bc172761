package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// Tables fit COLUMNS (the output of a test is no terminal).
func TestRenderWidth(t *testing.T) {
	g := writeLayout(t, "version: 1\ncluster: {nodes: 64, gpus_per_node: 8}\nmodules:\n- {name: vision, num_ranks: 256, tp: 4}\n- {name: language, num_ranks: 256, tp: 8, pp: 4, ep: 8}\n")
	for _, cols := range []string{"", "70", "80", "132", "junk"} {
		t.Run("COLUMNS="+cols, func(t *testing.T) {
			t.Setenv("COLUMNS", cols)
			code, out, errOut := mimoplan(t, "render", g)
			assert.Equal(t, 0, code, errOut)
			limit := 80 // unset or not a number: render's default
			if cols == "70" || cols == "132" {
				limit = map[string]int{"70": 70, "132": 132}[cols]
			}
			widest := 0
			for _, line := range strings.Split(out, "\n") {
				widest = max(widest, utf8.RuneCountInString(line))
			}
			assert.LessOrEqual(t, widest, limit)
			assert.Greater(t, widest, limit-25, "the table uses the width it has")
		})
	}
}

func TestRenderFlags(t *testing.T) {
	g := writeLayout(t, good)
	tests := []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"--all-groups"}, 0, "│ pos_embd ", ""},
		{[]string{}, 0, "singletons: cp pp gtp_remat", ""},
		{[]string{"--by", "rank", "--limit", "2", "--offset", "6"}, 0, "ranks 6-7 of 8 (2 rows)", ""},
		{[]string{"--by", "rank", "--group", "tp"}, 0, "│ tp group │", ""},
		{[]string{"--by", "rank", "--offset", "8"}, 2, "", "--offset 8 is past the last rank, 7"},
		{[]string{"--by", "rank", "--full", "--limit", "3"}, 2, "", "cannot be combined with --limit"},
		{[]string{"--limit", "3"}, 2, "", "--limit and --offset page --by rank"},
		{[]string{"--rank", "5"}, 0, "language  tp 1/2  dp 0/2  pp 0/1  (only pp stage)\n", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := mimoplan(t, append([]string{"render", g}, tt.args...)...)
			assert.Equal(t, tt.code, code, "stdout: %s\nstderr: %s", out, errOut)
			assert.Contains(t, out, tt.out)
			assert.Contains(t, errOut, tt.err)
		})
	}
}

func TestRenderPictures(t *testing.T) {
	g := writeLayout(t, good)
	tests := []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"--format", "svg"}, 0, `<g data-rank="5" data-module="language">`, ""},
		{[]string{"--format", "svg", "--group", "dp"}, 0, "<title>dp group 1 of language</title>", ""},
		{[]string{"--format", "html"}, 0, `data-rank="7" data-module="language"`, ""},
		{[]string{"--format", "html", "--group", "ep"}, 0, "<option selected>ep</option>", ""},
		{[]string{"--format", "svg", "--group", "tp,dp"}, 2, "", "outlines one group kind"},
		{[]string{"--format", "html", "--rank", "3"}, 2, "", "--rank, --by, --module, --full and --all-groups do not apply"},
		{[]string{"--format", "svg", "--group", "tensor"}, 2, "", `no group kind "tensor"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := mimoplan(t, append([]string{"render", g}, tt.args...)...)
			assert.Equal(t, tt.code, code, "stderr: %s", errOut)
			assert.Contains(t, out, tt.out)
			assert.Contains(t, errOut, tt.err)
		})
	}
}
