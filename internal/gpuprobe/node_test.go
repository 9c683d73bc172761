package gpuprobe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// node builds a snapshot of GPUs with these names and memories.
func node(gpus ...GPU) *Snapshot {
	s := &Snapshot{DriverVersion: "570.86.15", CUDADriverVersion: "12.8"}
	for i, g := range gpus {
		g.Index = i
		g.UUID = "GPU-" + string(rune('a'+i)) + "000"
		g.MIGDevices = []string{}
		s.GPUs = append(s.GPUs, g)
	}
	return s
}

const h100 = "NVIDIA H100 80GB HBM3"

func TestNode(t *testing.T) {
	full := GPU{Name: h100, MemoryBytes: 85520809984} // 81559 MiB, as NVML reports an H100
	odd := GPU{Name: h100, MemoryBytes: 85520809984 - 1000}
	mig := GPU{Name: h100, MemoryBytes: 85520809984, MIGEnabled: true}
	a100 := GPU{Name: "NVIDIA A100-SXM4-40GB", MemoryBytes: 40 << 30}
	tests := []struct {
		name    string
		s       *Snapshot
		visible *string // CUDA_VISIBLE_DEVICES; nil: unset
		want    layout.Machine
		rules   []diag.RuleID
	}{
		{name: "eight GPUs", s: node(full, full, full, full, full, full, full, full),
			want: layout.Machine{Cluster: layout.Cluster{Nodes: 1, GPUsPerNode: 8}, GPUMemory: 81559 << 20, About: "8 x " + h100}},
		{name: "memory rounded down to whole MiB", s: node(odd),
			want: layout.Machine{Cluster: layout.Cluster{Nodes: 1, GPUsPerNode: 1}, GPUMemory: 81558 << 20, About: "1 x " + h100}},
		{name: "the smallest visible GPU's memory", s: node(full, odd, full),
			want: layout.Machine{Cluster: layout.Cluster{Nodes: 1, GPUsPerNode: 3}, GPUMemory: 81558 << 20, About: "3 x " + h100}},
		{name: "CUDA_VISIBLE_DEVICES hides GPUs, the smaller one among them", s: node(full, odd, full), visible: ptr("2,0"),
			want: layout.Machine{Cluster: layout.Cluster{Nodes: 1, GPUsPerNode: 2}, GPUMemory: 81559 << 20, About: "2 x " + h100}},
		{name: "mixed models: validate's error", s: node(full, a100),
			want:  layout.Machine{Cluster: layout.Cluster{Nodes: 1, GPUsPerNode: 2}, GPUMemory: 40 << 30, About: "1 x " + h100 + ", 1 x NVIDIA A100-SXM4-40GB"},
			rules: []diag.RuleID{diag.RuleGPUMixedModels}},
		{name: "MIG: validate's warning", s: node(mig, full),
			want:  layout.Machine{Cluster: layout.Cluster{Nodes: 1, GPUsPerNode: 2}, GPUMemory: 81559 << 20, About: "2 x " + h100},
			rules: []diag.RuleID{diag.RuleGPUMIGEnabled}},
		{name: "a bad entry: the GPUs before it", s: node(full, full), visible: ptr("1,7"),
			want:  layout.Machine{Cluster: layout.Cluster{Nodes: 1, GPUsPerNode: 1}, GPUMemory: 81559 << 20, About: "1 x " + h100},
			rules: []diag.RuleID{diag.RuleGPUVisibleDevices}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, set := "", tt.visible != nil
			if set {
				v = *tt.visible
			}
			m, ds, err := Node(tt.s, v, set)
			require.NoError(t, err)
			assert.Equal(t, tt.want, *m)
			var rules []diag.RuleID
			for _, d := range ds {
				rules = append(rules, diag.RuleID(d.Rule))
			}
			assert.Equal(t, tt.rules, rules)
			assert.Equal(t, Check(tt.s, Need{}, v, set), ds, "the findings are validate --probe's")
		})
	}
}

func TestNodeWithoutVisibleGPUs(t *testing.T) {
	gpu := GPU{Name: h100, MemoryBytes: 80 << 30}
	tests := []struct {
		name    string
		s       *Snapshot
		visible *string
		want    string
	}{
		{name: "NVML lists none", s: node(), want: "no GPU of this machine is visible to CUDA (NVML lists no GPU)"},
		{name: "an empty CUDA_VISIBLE_DEVICES", s: node(gpu, gpu), visible: ptr(""),
			want: `no GPU of this machine is visible to CUDA (CUDA_VISIBLE_DEVICES="" leaves none of this machine's 2 GPUs (indices 0-1) visible)`},
		{name: "-1", s: node(gpu), visible: ptr("-1"),
			want: `CUDA_VISIBLE_DEVICES="-1" leaves none of this machine's 1 GPU (index 0) visible: CUDA_VISIBLE_DEVICES entry 1 "-1" does not resolve to a GPU: it is a negative index`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, set := "", tt.visible != nil
			if set {
				v = *tt.visible
			}
			m, _, err := Node(tt.s, v, set)
			assert.Nil(t, m)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func ptr(s string) *string { return &s }
