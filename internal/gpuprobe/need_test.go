package gpuprobe

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
)

func TestNeedOf(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want Need
	}{
		{"cluster", "version: 1\ncluster:\n  nodes: 2\n  gpus_per_node: 4\nmodules:\n- {name: language, num_ranks: 8}\n",
			Need{GPUs: 4, Key: "cluster.gpus_per_node", At: diag.Pos{Line: 4, Column: 18}}},
		{"world on one node", "version: 1\nworld_size: 6\nmodules:\n- {name: language, num_ranks: 6}\n",
			Need{GPUs: 6, Key: "world_size", At: diag.Pos{Line: 2, Column: 13}}},
		{"world unknown", "version: 1\nmodules:\n- {name: language, num_ranks: 6}\n",
			Need{Key: "world_size", At: diag.Pos{Line: 1, Column: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, _ := layout.Parse("l.yaml", []byte(tt.src))
			assert.Equal(t, tt.want, NeedOf(l))
		})
	}
}

func TestCountShortNamesTheKey(t *testing.T) {
	s := &Snapshot{GPUs: []GPU{{Index: 0, Name: "NVIDIA H200"}}}
	tests := []struct {
		need          Need
		message, hint string
	}{
		{Need{GPUs: 4, Key: "world_size"}, "this machine has 1 visible GPU but world_size is 4", "lower world_size (a layout without cluster runs on one node)"},
		{Need{GPUs: 2}, "this machine has 1 visible GPU but cluster.gpus_per_node is 2", "lower cluster.gpus_per_node"},
	}
	for _, tt := range tests {
		got := Check(s, tt.need, "", false)
		if assert.Len(t, got, 1) {
			assert.Equal(t, string(diag.RuleGPUCountShort), got[0].Rule)
			assert.Equal(t, tt.message, got[0].Message)
			assert.Contains(t, got[0].Hint, tt.hint)
		}
	}
}
