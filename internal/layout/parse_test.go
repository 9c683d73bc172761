package layout_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// found is the part of a diagnostic these tests pin down.
type found struct {
	Rule         string
	Line, Column int
}

func diags(d *diag.List) []found {
	var out []found
	for _, x := range d.Items {
		out = append(out, found{x.Rule, x.Line, x.Column})
	}
	return out
}

func TestParseValid(t *testing.T) {
	l, d := layout.Parse("ok.yaml", []byte(`version: 1
name: demo
target: megatron-lm
cluster:
  nodes: 2
  gpus_per_node: 4
batch: {micro_batch_size: 2, global_batch_size: 64}
modules:
  - name: vision
    dp: 2
    tp: 2
  - name: language
    num_ranks: 4
    tp: 2
    pp: 2
    ep: 2
    num_experts: 8
training: {use_distributed_optimizer: true}
`))
	require.Empty(t, d.Items)
	assert.Equal(t, 1, l.Version)
	assert.Equal(t, "demo", l.Name)
	assert.Equal(t, layout.TargetMegatronLM, l.Target)
	assert.Equal(t, 8, l.WorldSize)
	assert.Equal(t, &layout.Cluster{Nodes: 2, GPUsPerNode: 4}, l.Cluster)
	assert.Equal(t, &layout.Batch{MicroBatchSize: 2, GlobalBatchSize: 64}, l.Batch)
	require.Len(t, l.Modules, 2)
	v, lang := l.Modules[0], l.Modules[1]
	assert.Equal(t, 4, v.NumRanks, "num_ranks derived from tp*dp")
	assert.Equal(t, 0, v.RankOffset)
	assert.Equal(t, 4, lang.RankOffset, "rank_offset defaults to right after the previous module")
	assert.Equal(t, 1, lang.CP, "sizes default to 1")
	assert.Equal(t, 8, lang.NumExperts)
	assert.Equal(t, diag.Pos{Line: 16, Column: 9}, lang.Pos("ep"))
	assert.Equal(t, diag.Pos{Line: 12, Column: 5}, lang.Pos("cp"), "a missing field points at its module")
	assert.Equal(t, diag.Pos{Line: 5, Column: 10}, l.Pos("cluster.nodes"))
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []found
	}{
		{"empty", "", []found{{"yaml-syntax", 1, 1}}},
		{"only comments", "# nothing\n", []found{{"yaml-syntax", 1, 1}}},
		{"syntax", "version: 1\nmodules: [a\n", []found{{"yaml-syntax", 2, 1}}},
		{"bad indent", "version: 1\nmodules:\n  - x\n b: 2\n", []found{{"yaml-syntax", 4, 2}}},
		// yaml.v3 places this at the start of the list (line 4); the stray
		// key is on line 6.
		{"key out of its list", "version: 1\nworld_size: 8\nmodules:\n  - name: language\n    num_ranks: 8\n  tp: 2\n", []found{{"yaml-syntax", 6, 3}}},
		{"stray dash", "version: 1\nworld_size: 8\nmodules:\n- name: language\n  num_ranks: 8\n -x\n", []found{{"yaml-syntax", 6, 2}}},
		{"unclosed flow", "version: 1\nworld_size: 8\nmodules: [{name: language, num_ranks: 8]\n", []found{{"yaml-syntax", 3, 1}}},
		{"unclosed quote", "version: 1\nworld_size: 8\nname: \"abc\nmodules: []\n", []found{{"yaml-syntax", 3, 1}}},
		{"control character", "version: 1\nname: \"é\x1b[31m\"\nworld_size: 8\n", []found{{"yaml-syntax", 2, 9}}},
		{"unknown anchor after text", "version: 1\nname: é\nworld_size: 8\nmodules: [*mods]\n", []found{{"yaml-syntax", 4, 11}}},
		{"tab", "version: 1\n\tworld_size: 2\n", []found{{"yaml-syntax", 2, 1}}},
		{"unknown anchor", "version: 1\nworld_size: 2\nmodules: *mods\n", []found{{"yaml-syntax", 3, 10}}},
		{"not a mapping", "- 1\n- 2\n", []found{{"yaml-syntax", 1, 1}}},
		{"binary", "\x00\x01\x02garbage", []found{{"yaml-syntax", 1, 1}}},
		{"two documents", "version: 1\n---\nversion: 1\n", []found{{"yaml-syntax", 2, 1}}},
		{"missing version", "world_size: 1\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"invalid-value", 1, 1}}},
		{"version 2", "version: 2\nworld_size: 1\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"unsupported-version", 1, 10}}},
		{"version string", "version: \"1\"\nworld_size: 1\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"unsupported-version", 1, 10}}},
		{"unknown top key", "version: 1\nworld_size: 1\nwold: 2\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"unknown-field", 3, 1}}},
		{"unknown module key", "version: 1\nworld_size: 1\nmodules:\n  - name: language\n    num_ranks: 1\n    tpp: 1\n", []found{{"unknown-field", 6, 5}}},
		{"duplicate key", "version: 1\nworld_size: 1\nworld_size: 2\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"yaml-syntax", 3, 1}}},
		{"no world", "version: 1\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"invalid-value", 1, 1}}},
		{"world mismatch", "version: 1\nworld_size: 8\ncluster: {nodes: 2, gpus_per_node: 8}\nmodules: [{name: language, num_ranks: 8}]\n", []found{{"world-size-mismatch", 2, 13}}},
		{"world too big", "version: 1\nworld_size: 16777217\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"invalid-value", 2, 13}}},
		{"world negative", "version: 1\nworld_size: -8\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"invalid-value", 2, 13}}},
		{"world huge", "version: 1\nworld_size: 123456789012345678901234567890\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"invalid-value", 2, 13}}},
		{"world float", "version: 1\nworld_size: 8.0\nmodules: [{name: language, num_ranks: 8}]\n", []found{{"invalid-value", 2, 13}}},
		{"cluster overflow", "version: 1\ncluster: {nodes: 16777216, gpus_per_node: 16777216}\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"invalid-value", 2, 10}}},
		{"cluster missing gpus", "version: 1\ncluster: {nodes: 2}\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"invalid-value", 2, 10}}},
		{"bad target", "version: 1\ntarget: deepspeed\nworld_size: 1\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"invalid-value", 2, 9}}},
		{"no modules", "version: 1\nworld_size: 1\n", []found{{"invalid-value", 1, 1}}},
		{"empty modules", "version: 1\nworld_size: 1\nmodules: []\n", []found{{"invalid-value", 3, 10}}},
		{"module not mapping", "version: 1\nworld_size: 1\nmodules: [language]\n", []found{{"invalid-value", 3, 11}}},
		{"bad module name", "version: 1\nworld_size: 1\nmodules: [{name: Language, num_ranks: 1}]\n", []found{{"invalid-value", 3, 18}}},
		{"unnamed module", "version: 1\nworld_size: 1\nmodules: [{num_ranks: 1}]\n", []found{{"invalid-value", 3, 11}}},
		{"duplicate module", "version: 1\nworld_size: 2\nmodules:\n  - {name: language, num_ranks: 1}\n  - {name: language, num_ranks: 1}\n", []found{{"duplicate-module", 5, 12}}},
		{"zero tp", "version: 1\nworld_size: 2\nmodules: [{name: language, num_ranks: 2, tp: 0}]\n", []found{{"invalid-value", 3, 46}}},
		{"tp over world", "version: 1\nworld_size: 2\nmodules: [{name: language, num_ranks: 2, tp: 4}]\n", []found{{"invalid-value", 3, 46}}},
		{"quoted number", "version: 1\nworld_size: 2\nmodules: [{name: language, num_ranks: \"2\"}]\n", []found{{"invalid-value", 3, 39}}},
		{"negative offset", "version: 1\nworld_size: 2\nmodules: [{name: language, num_ranks: 2, rank_offset: -1}]\n", []found{{"invalid-value", 3, 55}}},
		{"no num_ranks or dp", "version: 1\nworld_size: 2\nmodules: [{name: language, tp: 2}]\n", []found{{"invalid-value", 3, 11}}},
		{"dp mismatch", "version: 1\nworld_size: 8\nmodules: [{name: language, num_ranks: 8, tp: 2, dp: 2}]\n", []found{{"dp-mismatch", 3, 53}}},
		{"dp overflow", "version: 1\nworld_size: 8\nmodules: [{name: language, tp: 8, pp: 8, dp: 8}]\n", []found{{"invalid-value", 3, 46}}},
		{"batch without mbs", "version: 1\nworld_size: 1\nbatch: {global_batch_size: 8}\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"invalid-value", 3, 8}}},
		{"hex", "version: 1\nworld_size: 0x10\nmodules: [{name: language, num_ranks: 16}]\n", []found{{"invalid-value", 2, 13}}},
		{"octal", "version: 1\nworld_size: 0o10\nmodules: [{name: language, num_ranks: 8}]\n", []found{{"invalid-value", 2, 13}}},
		{"leading zero", "version: 1\nworld_size: 010\nmodules: [{name: language, num_ranks: 8}]\n", []found{{"invalid-value", 2, 13}}},
		{"binary int", "version: 1\nworld_size: 8\nmodules: [{name: language, num_ranks: 8, tp: 0b10}]\n", []found{{"invalid-value", 3, 46}}},
		{"underscores", "version: 1\nworld_size: 1_000\nmodules: [{name: language, num_ranks: 1000}]\n", []found{{"invalid-value", 2, 13}}},
		{"tagged quoted int", "version: 1\nworld_size: !!int \"8\"\nmodules: [{name: language, num_ranks: 8}]\n", []found{{"invalid-value", 2, 13}}},
		{"tagged float", "version: 1\nworld_size: !!float 8\nmodules: [{name: language, num_ranks: 8}]\n", []found{{"invalid-value", 2, 13}}},
		{"block scalar", "version: 1\nworld_size: |\n  8\nmodules: [{name: language, num_ranks: 8}]\n", []found{{"invalid-value", 2, 13}}},
		{"1e400", "version: 1\nworld_size: 1e400\nmodules: [{name: language, num_ranks: 8}]\n", []found{{"invalid-value", 2, 13}}},
		{"-1e400", "version: 1\nworld_size: 8\nmodules: [{name: language, num_ranks: 8, rank_offset: -1e400}]\n", []found{{"invalid-value", 3, 55}}},
		{"huge negative", "version: 1\nworld_size: 8\nmodules: [{name: language, num_ranks: -99999999999999999999}]\n", []found{{"invalid-value", 3, 39}}},
		{"boolean", "version: 1\nworld_size: 8\nmodules: [{name: language, num_ranks: 8, ep: true}]\n", []found{{"invalid-value", 3, 46}}},
		{"nested list", "version: 1\nworld_size: [[8]]\nmodules: [{name: language, num_ranks: 8}]\n", []found{{"invalid-value", 2, 13}}},
		{"version tagged quoted", "version: !!int \"1\"\nworld_size: 1\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"unsupported-version", 1, 10}}},
		{"version 1.0", "version: 1.0\nworld_size: 1\nmodules: [{name: language, num_ranks: 1}]\n", []found{{"unsupported-version", 1, 10}}},
		{"merge key", "version: 1\nworld_size: 8\nmodules:\n  - &v {name: vision, num_ranks: 4}\n  - <<: *v\n    name: language\n    num_ranks: 4\n", []found{{"yaml-syntax", 5, 5}}},
		{"several at once", "version: 1\nworld_size: 4\nmodules:\n  - name: vision\n    num_ranks: 2\n    tp: -1\n  - name: language\n    num_ranks: 2\n    cp: x\n", []found{{"invalid-value", 6, 9}, {"invalid-value", 9, 9}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, d := layout.Parse("bad.yaml", []byte(tt.src))
			assert.Equal(t, tt.want, diags(d))
			for _, x := range d.Items {
				assert.NotEmpty(t, x.Message)
				_, known := diag.Lookup(x.Rule)
				assert.True(t, known, "rule %q is not in the catalogue", x.Rule)
			}
		})
	}
}

// Messages say what was read and what is wanted, without repeating the
// module the diagnostic already names.
func TestParseMessages(t *testing.T) {
	tests := []struct{ src, message, hint string }{
		{"version: 1\nworld_size: 010\nmodules: [{name: language, num_ranks: 8}]\n",
			"world_size must be a decimal number, got 010, which YAML reads as 8", "plain decimal"},
		{"version: 1\nworld_size: 1e400\nmodules: [{name: language, num_ranks: 8}]\n",
			"world_size must be at most 16777216, got 1e400", ""},
		{"version: 1\nworld_size: 8.0\nmodules: [{name: language, num_ranks: 8}]\n",
			"world_size must be a whole number, got the floating-point number 8.0", ""},
		{"version: 1\nworld_size: !!int \"8\"\nmodules: [{name: language, num_ranks: 8}]\n",
			`world_size must be a whole number, got the string "8"`, "remove the quotes"},
		{"version: 1\nworld_size: 8\nmodules:\n  - name: language\n    num_ranks: 8\n    tp: 2\n    tp: 4\n",
			`key "tp" is given twice (first at line 6)`, "remove one"},
		{"version: 1\ntarget: [core]\nworld_size: 8\nmodules: [{name: language, num_ranks: 8}]\n",
			"target must be one of core, megatron-lm, megatron-bridge, got a list", ""},
		{"version: 1\ntarget: deepspeed\nworld_size: 8\nmodules: [{name: language, num_ranks: 8}]\n",
			`target must be one of core, megatron-lm, megatron-bridge, got the string "deepspeed"`, ""},
		{"version: 1\nworld_size: 8\nmodules: [{name: language, num_ranks: 9223372036854775808}]\n",
			"num_ranks must be at most 8, got 9223372036854775808", ""},
		{"version: 1\ntarget_version: [6570]\nworld_size: 8\nmodules: [{name: language, num_ranks: 8}]\n",
			"target_version must be a date or a PR number, got a list", "a date YYYY-MM-DD"},
		{"version: 1\ntarget_version: 12\nworld_size: 8\nmodules: [{name: language, num_ranks: 8}]\n",
			`target version "12": mimoplan knows no change of PR #12; give a date YYYY-MM-DD (upstream as of that day) or a PR number (Megatron-LM 5115, 5162, 5375, 5602, 6263, 6570, 5720, 6894, 7435; Megatron-Bridge 2869, 4071, 4485: upstream right after it merged)`, "PR number"},
		{"version: 1\ntarget_version: 2026-02-30\nworld_size: 8\nmodules: [{name: language, num_ranks: 8}]\n",
			`target version "2026-02-30" is not a date YYYY-MM-DD (upstream as of that day) or a PR number (Megatron-LM 5115, 5162, 5375, 5602, 6263, 6570, 5720, 6894, 7435; Megatron-Bridge 2869, 4071, 4485: upstream right after it merged)`, ""},
	}
	for _, tt := range tests {
		_, d := layout.Parse("m.yaml", []byte(tt.src))
		require.Len(t, d.Items, 1, tt.src)
		assert.Equal(t, tt.message, d.Items[0].Message)
		assert.Contains(t, d.Items[0].Hint, tt.hint)
	}
}

// Integers YAML readers agree on are read.
func TestParseIntegerForms(t *testing.T) {
	for _, v := range []string{"8", "+8", "!!int 8", "8 # a comment", "&n 8"} {
		l, d := layout.Parse("i.yaml", []byte("version: 1\nworld_size: "+v+"\nmodules: [{name: language, num_ranks: 8}]\n"))
		assert.Empty(t, d.Items, v)
		assert.Equal(t, 8, l.WorldSize, v)
	}
}

func TestParseHints(t *testing.T) {
	_, d := layout.Parse("h.yaml", []byte("version: 1\nworld_size: 1\nmodules:\n  - name: language\n    num_rank: 1\n"))
	require.Len(t, d.Items, 1, "a misspelt num_ranks is not also reported as missing")
	assert.Contains(t, d.Items[0].Hint, `did you mean "num_ranks"?`)
	_, d = layout.Parse("h.yaml", []byte("version: 1\nworld_size: 2\nmodules: [{name: language, num_ranks: \"2\"}]\n"))
	require.NotEmpty(t, d.Items)
	assert.Contains(t, d.Items[0].Hint, "remove the quotes")
}

// Hostile input must end in a diagnostic, never a panic or a blow-up.
func TestParseHostile(t *testing.T) {
	bomb := "version: 1\na: &a [x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for i := range 20 {
		name := string(rune('b' + i))
		bomb += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = name
	}
	bomb += "modules: *" + prev + "\nworld_size: 1\n"
	tests := map[string]string{
		"alias bomb":   bomb,
		"deep nesting": "version: 1\nmodules: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n",
		"deep maps":    strings.Repeat("a: {", 5000) + strings.Repeat("}", 5000),
		"too large":    "version: 1\n" + strings.Repeat("# padding\n", layout.MaxFileSize/10+1),
		"alias loop":   "version: 1\nworld_size: &w *w\n",
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			_, d := layout.Parse("hostile.yaml", []byte(src))
			assert.True(t, d.HasErrors(), "hostile input must be reported: %s", name)
		})
	}
}

func TestLoad(t *testing.T) {
	_, _, err := layout.Load(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.ErrorContains(t, err, "read layout")
	_, _, err = layout.Load(t.TempDir())
	assert.ErrorContains(t, err, "is a directory")

	p := filepath.Join(t.TempDir(), "big.yaml")
	require.NoError(t, os.WriteFile(p, make([]byte, layout.MaxFileSize+100), 0o644))
	_, d, err := layout.Load(p)
	require.NoError(t, err)
	assert.Equal(t, []found{{"yaml-syntax", 1, 1}}, diags(d))
}

// TestParseTargetVersion: a date (YAML reads it as a timestamp), a PR
// number and "#PR" are read; none given is the newest.
func TestParseTargetVersion(t *testing.T) {
	const rest = "world_size: 8\nmodules: [{name: language, num_ranks: 8}]\n"
	for _, tc := range []struct {
		given string
		has   bool // PR #6894 is in
	}{
		{"", true},
		{"target_version: 2026-08-22\n", false},
		{"target_version: \"2026-08-26\"\n", true},
		{"target_version: 6570\n", false},
		{"target_version: \"#6894\"\n", true},
	} {
		l, d := layout.Parse("v.yaml", []byte("version: 1\n"+tc.given+rest))
		require.Empty(t, d.Items, tc.given)
		assert.Equal(t, tc.has, l.TargetVersion.Has(upstream.PRMimoNames), tc.given)
	}
}
