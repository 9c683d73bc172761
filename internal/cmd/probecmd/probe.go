// Package probecmd is the probe command.
package probecmd

import (
	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
)

// Options are probe's settings.
type Options struct {
	IO         *cmdutil.IOStreams
	ProbeLocal func() (*gpuprobe.Snapshot, error)
	Format     string
}

// NewCmdProbe returns the probe command; runF, when not nil, runs in
// place of probeRun.
func NewCmdProbe(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, ProbeLocal: f.ProbeLocal}
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
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return probeRun(opts)
		},
	}
	cmdutil.FormatVar(cmd.Flags(), &opts.Format, cmdutil.Text, "json")
	return cmd
}

func probeRun(opts *Options) error {
	s, err := opts.ProbeLocal()
	if err != nil {
		return exitcode.Wrap(exitcode.NoGPU, err)
	}
	if opts.Format == "json" {
		return gpuprobe.WriteJSON(opts.IO.Out, s)
	}
	return gpuprobe.WriteTable(opts.IO.Out, s)
}
