package main

import (
	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/gpuprobe"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// addProbeFlag gives a command that reads layouts the --probe flag.
func addProbeFlag(cmd *cobra.Command) {
	cmd.Flags().Bool("probe", false, "also check this machine's GPUs (NVML) as one node of the layout; honours CUDA_VISIBLE_DEVICES")
}

// localGPUs probes this machine once, for --probe; nil when the flag is
// off. Without NVML it returns the exit-3 error.
func localGPUs(cmd *cobra.Command) (*gpuprobe.Snapshot, error) {
	// applyEnv has set the flag from MIMOPLAN_PROBE; a command without
	// the flag gets an error here, and no probe.
	if on, err := cmd.Flags().GetBool("probe"); err != nil || !on {
		return nil, nil
	}
	s, err := probeLocal()
	if err != nil {
		return nil, &exitError{code: exitNoGPU, err: err}
	}
	return s, nil
}

// checkGPUs adds the GPU rules for this machine to a layout's diagnostics.
func checkGPUs(s *gpuprobe.Snapshot, res *validate.Result) {
	if s == nil || res.Layout == nil {
		return
	}
	res.Diags.Append(gpuprobe.CheckEnv(s, gpuprobe.NeedOf(res.Layout))...)
	// gpu-memory-short against the smallest GPU NVML reports, where it is
	// below cluster.gpu_memory (which validate has checked already).
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
