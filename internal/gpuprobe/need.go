package gpuprobe

import (
	"os"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// Need is what one node of a layout asks of the machine it runs on.
type Need struct {
	// GPUs is the number of GPUs one node must make visible; 0 skips
	// gpu-count-short.
	GPUs int
	// Key is the layout key GPUs comes from, for messages; empty means
	// cluster.gpus_per_node.
	Key string
	// At is that key's position in the layout file, or the zero Pos.
	At diag.Pos
}

// NeedOf reads a layout's per-node need: cluster.gpus_per_node, or, for a
// layout without a cluster, the whole world on this one node (as
// launch-plan and preflight run such a layout: torchrun on one host).
func NeedOf(l *layout.Layout) Need {
	if l.Cluster != nil {
		return Need{GPUs: l.Cluster.GPUsPerNode, Key: keyGPUsPerNode, At: l.Pos(keyGPUsPerNode)}
	}
	return Need{GPUs: l.WorldSize, Key: keyWorldSize, At: l.Pos(keyWorldSize)}
}

const (
	keyGPUsPerNode = "cluster.gpus_per_node"
	keyWorldSize   = "world_size"
)

func (n Need) key() string {
	if n.Key == "" {
		return keyGPUsPerNode
	}
	return n.Key
}

// lower says what to lower in a hint about too few GPUs.
func (n Need) lower() string {
	if n.key() == keyWorldSize {
		return "world_size (a layout without cluster runs on one node), or give cluster.nodes and cluster.gpus_per_node"
	}
	return "cluster.gpus_per_node (and cluster.nodes or world_size with it)"
}

// CheckEnv is Check with CUDA_VISIBLE_DEVICES read from the environment.
func CheckEnv(s *Snapshot, need Need) []diag.Diagnostic {
	v, set := os.LookupEnv(VisibleDevicesEnv)
	return Check(s, need, v, set)
}

// AddChecks adds the checks of this machine's GPUs (s; nil when not
// probed), as one node of the layout, to a checked layout's diagnostics:
// the GPU rules, and gpu-memory-short against the smallest GPU NVML
// reports where it is below cluster.gpu_memory (which validate has
// checked already).
func AddChecks(res *validate.Result, s *Snapshot) {
	if s == nil || res.Layout == nil {
		return
	}
	res.Diags.Append(CheckEnv(s, NeedOf(res.Layout))...)
	var least uint64
	for _, g := range s.GPUs {
		if least == 0 || g.MemoryBytes < least {
			least = g.MemoryBytes
		}
	}
	if least > 0 && (res.Layout.GPUMemory == 0 || int64(least) < res.Layout.GPUMemory) && least <= 1<<62 {
		validate.CheckMemory(res, int64(least), "this machine's GPU memory ("+validate.GiB(float64(least))+", NVML)")
	}
	res.Diags.Sort()
}
