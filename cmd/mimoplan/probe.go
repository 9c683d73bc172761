package main

import (
	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/gpuprobe"
)

func init() { register(newProbeCmd) }

// probeFormats are the output formats of probe.
var probeFormats = []string{"table", "json"}

// probeLocal takes the snapshot; tests replace it to run without a GPU.
var probeLocal = gpuprobe.ProbeLocal

func newProbeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "List the local GPUs and the links between them (NVML)",
		Long: `List the GPUs of this machine through NVML: index, name, UUID, PCI bus id,
memory, compute capability, MIG mode, the driver and CUDA driver versions,
and how each pair of GPUs is connected, in nvidia-smi topo -m's codes
(NV# for # NVLinks, PIX, PXB, PHB, NODE, SYS).

NVML ignores CUDA_VISIBLE_DEVICES, so probe lists every GPU; validate
--probe applies the variable. ` + gpuprobe.LibraryPathEnv + ` names a
libnvidia-ml.so to load instead of libnvidia-ml.so.1.

Exit codes: 0 listed, 2 usage error, 3 no NVIDIA driver or NVML.`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().String("format", "table", "output format: table, json")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		format := config(cmd).GetString("format")
		if err := oneOf("format", format, probeFormats...); err != nil {
			return err
		}
		s, err := probeLocal()
		if err != nil {
			return &exitError{code: exitNoGPU, err: err}
		}
		if format == "json" {
			return gpuprobe.WriteJSON(cmd.OutOrStdout(), s)
		}
		return gpuprobe.WriteTable(cmd.OutOrStdout(), s)
	}
	return cmd
}
