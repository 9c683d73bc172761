package gpuprobe

import (
	"fmt"
	"os"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// Node reads the snapshot as one node of a cluster, the machine suggest
// --probe plans for: one node whose GPUs are those a CUDA process sees
// (CUDA_VISIBLE_DEVICES applied as Check applies it; visibleDevices and
// visibleSet as os.LookupEnv returns it), and gpu_memory the smallest
// visible GPU's total memory, rounded down to a whole MiB (as nvidia-smi
// prints it), so that every GPU has at least what the plan assumes.
//
// The diagnostics are Check's for that node (gpu-visible-devices,
// gpu-mixed-models, gpu-mig-enabled): what validate --probe would say
// about the machine. The error says that no GPU is visible at all.
func Node(s *Snapshot, visibleDevices string, visibleSet bool) (*layout.Machine, []diag.Diagnostic, error) {
	ds := Check(s, Need{}, visibleDevices, visibleSet)
	visible, _ := visibleGPUs(s, visibleDevices, visibleSet)
	if len(visible) == 0 {
		why := "NVML lists no GPU"
		if len(s.GPUs) > 0 {
			why = fmt.Sprintf("%s=%q leaves none of this machine's %s visible", VisibleDevicesEnv, visibleDevices, countGPUs(len(s.GPUs)))
		}
		for _, d := range ds {
			if d.Rule == string(diag.RuleGPUVisibleDevices) {
				why += ": " + d.Message
			}
		}
		return nil, ds, fmt.Errorf("no GPU of this machine is visible to CUDA (%s)", why)
	}
	var least uint64
	for _, v := range visible {
		if b := s.GPUs[v.gpu].MemoryBytes; least == 0 || b < least {
			least = b
		}
	}
	m := &layout.Machine{
		Cluster:   layout.Cluster{Nodes: 1, GPUsPerNode: len(visible)},
		GPUMemory: int64(min(least, 1<<62) &^ (1<<20 - 1)),
		About:     about(s, visible),
	}
	return m, ds, nil
}

// NodeEnv is Node with CUDA_VISIBLE_DEVICES read from the environment.
func NodeEnv(s *Snapshot) (*layout.Machine, []diag.Diagnostic, error) {
	v, set := os.LookupEnv(VisibleDevicesEnv)
	return Node(s, v, set)
}

// about names the visible GPUs: "8 x NVIDIA H100 80GB HBM3".
func about(s *Snapshot, visible []visibleDevice) string {
	var parts []string
	for _, m := range modelsOf(s, visible) {
		n := 0
		for _, v := range visible {
			if s.GPUs[v.gpu].Name == m.name {
				n++
			}
		}
		parts = append(parts, fmt.Sprintf("%d x %s", n, m.name))
	}
	return strings.Join(parts, ", ")
}
