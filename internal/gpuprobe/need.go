package gpuprobe

import (
	"os"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
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
