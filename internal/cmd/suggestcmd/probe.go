package suggestcmd

import (
	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/suggest"
)

// probeNode is --probe: this machine as gpuprobe.NodeEnv reads it (the
// GPUs a CUDA process sees), with the machine's own findings. Without
// NVML, or with no GPU visible, it ends with exit 3, as the other --probe
// commands do.
func probeNode(probe func() (*gpuprobe.Snapshot, error)) suggest.Probe {
	return func() (*layout.Machine, []diag.Diagnostic, error) {
		s, err := probe()
		var on *layout.Machine
		var found []diag.Diagnostic
		if err == nil {
			on, found, err = gpuprobe.NodeEnv(s)
		}
		if err != nil {
			return nil, nil, exitcode.Wrap(exitcode.NoGPU, err)
		}
		return on, found, nil
	}
}
