// Package suggestcmd is the suggest command.
package suggestcmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/plan"
	"github.com/mimoplan/mimoplan/internal/suggest"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// Options are suggest's settings.
type Options struct {
	IO         *cmdutil.IOStreams
	ProbeLocal func() (*gpuprobe.Snapshot, error)
	Probe      bool
	Spec       string
	Top        int
	All        bool
	Format     string
	Out        string
	GTP        bool
	Progress   bool
	MaxNodes   int
	Headroom   string
	HW         HardwareFlags
	// TargetVersion is --target-version: the upstream whose rules apply.
	TargetVersion string
}

// NewCmdSuggest returns the suggest command; runF, when not nil, runs in
// place of suggestRun.
func NewCmdSuggest(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, ProbeLocal: f.ProbeLocal}
	cmd := &cobra.Command{
		Use:   "suggest SPEC|-",
		Short: "Search every valid layout for a cluster and models, best first",
		Long: `Read a spec (a layout whose modules may leave num_ranks, rank_offset and
their parallel sizes open, with constraints colocated, max_tp and
align: node) and print the layouts it allows that pass every rule of the
target and fit GPU memory, ranked by an estimated time per global batch
whose parts are shown (docs/suggest.md).

  mimoplan suggest spec.yaml                       the best 5, as a table
  mimoplan suggest spec.yaml --all --format json   every valid layout
  mimoplan suggest spec.yaml --out layout.yaml     write the best as a layout
  mimoplan suggest spec.yaml --probe               plan for this machine: one node
                                                   of its visible GPUs (NVML)
  mimoplan suggest - < spec.yaml                   the spec from standard input

--target-version applies an upstream's rules over the spec's
target_version; the layout --out writes keeps the spec's own.

Exit codes: 0 at least one layout fits, 1 the spec is invalid or nothing
fits (the closest misses are printed with what blocks each), 2 usage error,
3 --probe found no NVML or no visible GPU.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec = args[0]
			if runF != nil {
				return runF(opts)
			}
			return suggestRun(opts)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&opts.Top, "top", 5, "how many layouts to show")
	fs.BoolVar(&opts.All, "all", false, "show every valid layout")
	cmdutil.FormatVar(fs, &opts.Format, cmdutil.Text, "json", "yaml", "html")
	fs.StringVar(&opts.Out, "out", "", "write the best layout to this file")
	fs.BoolVar(&opts.Probe, "probe", false, "plan for this machine's visible GPUs (NVML) in place of the spec's cluster; honours CUDA_VISIBLE_DEVICES")
	fs.BoolVar(&opts.Progress, "progress", false, "report the search's progress on stderr even when it is not a terminal (a line every ten seconds)")
	fs.IntVar(&opts.MaxNodes, "max-nodes", plan.DefaultMaxNodes, "stop the search after this many search nodes, with the best layouts found so far")
	fs.StringVar(&opts.Headroom, "headroom", fmt.Sprintf("%g%%", 100*plan.DefaultHeadroom), "GPU memory every layout must leave free: a share of gpu_memory (10%) or a size (8GiB, 0)")
	fs.BoolVar(&opts.GTP, "gtp", false, "also search gtp_remat and expt_gtp_remat where the spec leaves them out")
	opts.HW.Bind(fs)
	cmdutil.AddTargetVersionFlag(fs, &opts.TargetVersion)
	cmd.MarkFlagsMutuallyExclusive("top", "all")
	return cmd
}

func suggestRun(o *Options) error {
	if o.Top < 1 {
		return exitcode.Usagef("invalid --top %d: want at least 1", o.Top)
	}
	if o.MaxNodes < 1 {
		return exitcode.Usagef("invalid --max-nodes %d: want at least 1", o.MaxNodes)
	}
	sel, err := o.HW.Select()
	if err != nil {
		return err
	}
	frac, bytes, err := headroom(o.Headroom)
	if err != nil {
		return err
	}
	r := suggest.Request{SpecPath: o.Spec, Stdin: o.IO.In, Top: o.Top, GTP: o.GTP, Step: sel, Format: o.Format, Out: o.Out, MaxNodes: o.MaxNodes,
		HeadroomFraction: frac, HeadroomBytes: bytes, Width: cmdutil.TerminalWidth(o.IO.Out, 0),
		Progress: func() (func(int, int), func()) { return cmdutil.Progress(o.IO.ErrOut) }}
	if o.Progress {
		r.Progress = func() (func(int, int), func()) { return cmdutil.ProgressLines(o.IO.ErrOut) }
	}
	if o.All {
		r.Top = 0
	}
	if o.TargetVersion != "" {
		v, err := upstream.Parse(o.TargetVersion)
		if err != nil {
			return exitcode.Usagef("--target-version: %v", err)
		}
		r.TargetVersion = &v
	}
	if o.Probe {
		r.Probe = probeNode(o.ProbeLocal)
	}
	return suggest.Run(o.IO.Out, o.IO.ErrOut, r)
}

// headroom reads --headroom: a share of gpu_memory ("5%") or a size
// ("4GiB", "0"); bytes is -1 for a share.
func headroom(text string) (frac, bytes float64, err error) {
	if p, ok := strings.CutSuffix(text, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || !(f >= 0 && f < 100) {
			return 0, 0, exitcode.Usagef("invalid --headroom %q: want a share of gpu_memory from 0%% to below 100%%, or a size such as 4GiB", text)
		}
		return f / 100, -1, nil
	}
	b, err := layout.ParseSize(text)
	if err != nil {
		return 0, 0, exitcode.Usagef("invalid --headroom: %v", err)
	}
	return 0, b, nil
}
