package layout

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
)

func TestParseSpecOn(t *testing.T) {
	node := &Machine{Cluster: Cluster{Nodes: 1, GPUsPerNode: 4}, GPUMemory: 81559 << 20, About: "4 x H100"}
	const mods = "modules:\n  - {name: language}\n"
	tests := []struct {
		name     string
		src      string
		replaced []Replacement
	}{
		{name: "no cluster", src: "version: 1\n" + mods},
		{name: "the same cluster", src: "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu_memory: 81559MiB}\n" + mods},
		{
			name: "another cluster",
			src:  "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu_memory: 80GiB}\n" + mods,
			replaced: []Replacement{
				{Key: "cluster.nodes", Pos: diag.Pos{Line: 2, Column: 18}, Spec: "2", Machine: "1"},
				{Key: "cluster.gpus_per_node", Pos: diag.Pos{Line: 2, Column: 36}, Spec: "8", Machine: "4"},
				{Key: "cluster.gpu_memory", Pos: diag.Pos{Line: 2, Column: 51}, Spec: "80GiB", Machine: "81559MiB"},
			},
		},
		{
			name:     "world_size",
			src:      "version: 1\nworld_size: 16\n" + mods,
			replaced: []Replacement{{Key: "world_size", Pos: diag.Pos{Line: 2, Column: 13}, Spec: "16", Machine: "4"}},
		},
		{
			name: "world_size and cluster that disagree: both replaced, no mismatch",
			src:  "version: 1\nworld_size: 4\ncluster: {nodes: 2, gpus_per_node: 4}\n" + mods,
			replaced: []Replacement{
				{Key: "cluster.nodes", Pos: diag.Pos{Line: 3, Column: 18}, Spec: "2", Machine: "1"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, d := ParseSpecOn("s.yaml", []byte(tt.src), node)
			require.Empty(t, d.Items)
			assert.Equal(t, &Cluster{Nodes: 1, GPUsPerNode: 4}, l.Cluster)
			assert.Equal(t, 4, l.WorldSize)
			assert.Equal(t, int64(81559<<20), l.GPUMemory)
			assert.Same(t, node, l.Machine)
			assert.Equal(t, tt.replaced, l.Replaced)
		})
	}
}

func TestParseSpecOnErrors(t *testing.T) {
	node := &Machine{Cluster: Cluster{Nodes: 1, GPUsPerNode: 4}, GPUMemory: 80 << 30}
	tests := []struct {
		name, src string
		want      string // the one error's message
		pos       diag.Pos
	}{
		{
			name: "a malformed cluster is still an error",
			src:  "version: 1\ncluster: {nodes: two, gpus_per_node: 8}\nmodules:\n  - {name: language}\n",
			want: "cluster.nodes must be a whole number", pos: diag.Pos{Line: 2, Column: 18},
		},
		{
			name: "num_ranks beyond this node",
			src:  "version: 1\ncluster: {nodes: 2, gpus_per_node: 8}\nmodules:\n  - {name: language, num_ranks: 16}\n",
			want: "num_ranks must be at most 4, got 16", pos: diag.Pos{Line: 4, Column: 33},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, d := ParseSpecOn("s.yaml", []byte(tt.src), node)
			require.Len(t, d.Items, 1, "%+v", d.Items)
			assert.Contains(t, d.Items[0].Message, tt.want)
			assert.Equal(t, tt.pos, diag.Pos{Line: d.Items[0].Line, Column: d.Items[0].Column})
		})
	}
	// Without a machine a spec needs its cluster, as before.
	_, d := ParseSpecOn("s.yaml", []byte("version: 1\nmodules:\n  - {name: language}\n"), nil)
	require.Len(t, d.Items, 1)
	assert.Contains(t, d.Items[0].Message, "layout needs world_size or cluster")
}

func TestMemoryString(t *testing.T) {
	for b, want := range map[int64]string{80 << 30: "80GiB", 81559 << 20: "81559MiB", 81559<<20 + 1<<19: "81559.5MiB"} {
		assert.Equal(t, want, memoryString(b))
		l, d := Parse("m.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 1, gpu_memory: "+want+"}\nmodules:\n  - {name: language, num_ranks: 1}\n"))
		require.Empty(t, d.Items)
		assert.Equal(t, b, l.GPUMemory, "%s reads back", want)
	}
}
