package layout_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
)

func parseEnv(block string) (*layout.Layout, *diag.List) {
	return layout.Parse("t.yaml", []byte("version: 1\nworld_size: 8\nenv:\n"+block+"modules:\n  - {name: language, num_ranks: 8}\n"))
}

// The env block reads back in the layout's order, each value as written,
// with its position; PYTORCH_CUDA_ALLOC_CONF's expandable_segments is read
// as PyTorch reads it, the last option winning.
func TestEnvReadBack(t *testing.T) {
	for _, c := range []struct {
		block      string
		want       []layout.EnvVar
		expandable bool
	}{
		{"  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True\n  CUDA_DEVICE_MAX_CONNECTIONS: 1\n",
			[]layout.EnvVar{{Name: "PYTORCH_CUDA_ALLOC_CONF", Value: "expandable_segments:True"}, {Name: "CUDA_DEVICE_MAX_CONNECTIONS", Value: "1"}}, true},
		{"  NCCL_NVLS_ENABLE: 0\n  PYTORCH_CUDA_ALLOC_CONF: \"max_split_size_mb:512,expandable_segments:True\"\n",
			[]layout.EnvVar{{Name: "NCCL_NVLS_ENABLE", Value: "0"}, {Name: "PYTORCH_CUDA_ALLOC_CONF", Value: "max_split_size_mb:512,expandable_segments:True"}}, true},
		{"  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True,expandable_segments:False\n",
			[]layout.EnvVar{{Name: "PYTORCH_CUDA_ALLOC_CONF", Value: "expandable_segments:True,expandable_segments:False"}}, false},
		{"  PYTORCH_CUDA_ALLOC_CONF: max_split_size_mb:512\n  TORCH_NCCL_AVOID_RECORD_STREAMS: true\n",
			[]layout.EnvVar{{Name: "PYTORCH_CUDA_ALLOC_CONF", Value: "max_split_size_mb:512"}, {Name: "TORCH_NCCL_AVOID_RECORD_STREAMS", Value: "true"}}, false},
	} {
		l, d := parseEnv(c.block)
		require.Empty(t, d.Items, c.block)
		assert.Equal(t, c.want, l.Env, c.block)
		assert.Equal(t, c.expandable, l.ExpandableSegments(), c.block)
		assert.Equal(t, diag.Pos{Line: 4, Column: len(c.want[0].Name) + 5}, l.EnvPos(c.want[0].Name), c.block)
		tr := l.ModelTraining(&l.Modules[0], 8)
		assert.Equal(t, c.expandable, tr.ExpandableSegments, c.block)
	}
	l, d := parseEnv("  {}\n")
	require.Empty(t, d.Items)
	assert.Empty(t, l.Env)
	assert.False(t, l.ExpandableSegments())
}

// Every independent problem of the env block is reported, each at its
// place, and the good variables are kept.
func TestEnvErrors(t *testing.T) {
	l, d := parseEnv("  1NCCL: x\n  A: [1]\n  B: null\n  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:true\n  OK: yes\n  A: 2\n")
	var got []string
	for _, it := range d.Items {
		got = append(got, fmt.Sprintf("%d:%d %s %s", it.Line, it.Column, it.Rule, it.Message))
	}
	assert.Equal(t, []string{
		`4:3 invalid-value env: "1NCCL" is not a variable name`,
		`5:6 invalid-value env.A must be text, a number or a boolean, got a list`,
		`6:6 invalid-value env.B must be text, a number or a boolean, got no value`,
		`7:28 invalid-value env.PYTORCH_CUDA_ALLOC_CONF: expandable_segments must be True or False, got "true"`,
		`9:3 yaml-syntax env: key "A" is given twice (first at line 5)`,
	}, got)
	assert.Equal(t, []layout.EnvVar{{Name: "OK", Value: "yes"}}, l.Env)
	_, d = parseEnv("  PYTORCH_CUDA_ALLOC_CONF: \"expandable_segments:\"\n")
	require.Len(t, d.Items, 1)
	assert.Contains(t, d.Items[0].Message, `got "nothing"`)
	_, d = parseEnv("  [A]: 1\n")
	require.Len(t, d.Items, 1)
	assert.Equal(t, string(diag.RuleUnknownField), d.Items[0].Rule)
	_, d = layout.Parse("t.yaml", []byte("version: 1\nworld_size: 8\nenv: [A]\nmodules:\n  - {name: language, num_ranks: 8}\n"))
	require.Len(t, d.Items, 1)
	assert.Contains(t, d.Items[0].Message, "env must be a mapping")
}
