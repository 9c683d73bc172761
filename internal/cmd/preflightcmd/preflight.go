// Package preflightcmd is the preflight command.
package preflightcmd

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/preflight"
	"github.com/mimoplan/mimoplan/internal/render"
)

// Options are preflight's settings.
type Options struct {
	IO      *cmdutil.IOStreams
	Context context.Context
	Path    string
	Request preflight.Request
	// TargetVersion is --target-version: the upstream whose rules apply.
	TargetVersion string
}

// NewCmdPreflight returns the preflight command; runF, when not nil, runs
// in place of preflightRun.
func NewCmdPreflight(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	r := &opts.Request
	cmd := &cobra.Command{
		Use:   "preflight LAYOUT (--out DIR | --run)",
		Short: "Prove the layout's process groups on the real GPUs",
		Long: `Write a Python payload and the layout's plan JSON, and print the torchrun
line that runs it on every GPU (--out DIR), or run it here (--run). Each
rank binds the GPU of its LOCAL_RANK, builds every group of every module in
one global order, checks get_process_group_ranks and a one-hot all-reduce
against the plan, and times one all-reduce per group kind; rank 0 prints one
table. A step that hangs longer than --timeout is reported with the ranks
that did not answer.

  mimoplan preflight layout.yaml --out pf             prints the torchrun line
  mimoplan preflight layout.yaml --run                runs it on this node
  mimoplan preflight layout.yaml --out pf --hosts h0,h1    one line per node
  mimoplan preflight layout.yaml --out pf --format slurm --sbatch partition=gpu

--emit DIR, its name before every command wrote with --out, still works.

Exit codes: 0 every check passed, 1 invalid layout or a check failed,
2 usage error or no launcher (torchrun) to run with, 128+N interrupted by
signal N. See docs/preflight.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path, opts.Context = args[0], cmd.Context()
			if cmd.Flags().Changed("emit") { // by flag, variable or config file
				fmt.Fprintln(opts.IO.ErrOut, "mimoplan: --emit is deprecated: use --out, its name in every command")
			}
			r.EntrypointGiven = cmd.Flags().Changed("entrypoint")
			if r.Format == "k8s" || r.Format == "pytorchjob" {
				// As launch-plan: hosts from the config file do not apply.
				if err := cmdutil.DropDefaults(cmd.Flags(), "hosts", "master-addr"); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return preflightRun(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&r.Emit, "out", "", "write preflight.py and plan.json into this directory and print the torchrun line(s)")
	fs.StringVar(&r.Emit, "emit", "", "the old name of --out")
	_ = fs.MarkHidden("emit")
	fs.BoolVar(&r.Run, "run", false, "run the payload on this node (one-node layouts)")
	fs.StringVar(&r.Bytes, "bytes", "64MiB", "size of the timed all-reduce (0 skips the timing)")
	fs.DurationVar(&r.Options.Timeout, "timeout", preflight.DefaultTimeout, "how long one step may take before it is reported")
	fs.IntVar(&r.Options.Iters, "iters", preflight.DefaultIters, "timed all-reduces per group kind")
	fs.BoolVar(&r.Options.LazyInit, "lazy-init", false, "create NCCL communicators at first use rather than splitting them from the world's")
	fs.StringArrayVar(&r.Hosts, "hosts", nil, "several nodes: hosts in node-rank order")
	fs.StringVar(&r.MasterAddr, "master-addr", "", "several nodes: rendezvous master address (default: the first host)")
	cmdutil.PortVar(fs, &r.MasterPortText, "master-port", strconv.Itoa(launch.DefaultMasterPort), "several nodes: rendezvous master port (decimal, 1-65535)")
	fs.StringVar(&r.Entrypoint, "entrypoint", "torchrun", `launcher in the printed lines, e.g. "python3 -m torch.distributed.run"`)
	cmdutil.StringEnumVar(fs, &r.Format, "format", "lines", "--out: lines (print each node's torchrun line) or a launch-plan format for the scheduler, written into DIR: "+strings.Join(preflight.Formats[1:], ", "), preflight.Formats...)
	fs.StringVar(&r.Image, "image", "", "--format k8s, pytorchjob: container image (DIR must be at the same path in the pods)")
	fs.StringArrayVar(&r.Sbatch, "sbatch", nil, "--format slurm: extra #SBATCH directive KEY=VALUE or KEY (partition=gpu, account=a, time=0:30:00, exclusive; repeatable)")
	cmdutil.AddTargetVersionFlag(fs, &opts.TargetVersion)
	cmd.MarkFlagsMutuallyExclusive("out", "emit")
	return cmd
}

func preflightRun(opts *Options) error {
	r := opts.Request
	lo, err := r.Check()
	if err != nil {
		return err
	}
	loader, err := cmdutil.LayoutFlags{TargetVersion: opts.TargetVersion}.NewLoader(nil, opts.IO.In)
	if err != nil {
		return err
	}
	res, err := loader.LoadValid(opts.IO.ErrOut, opts.Path)
	if err != nil {
		return err
	}
	r.WritePlan = func(w io.Writer) error { return render.JSON(w, res.Topology) }
	return preflight.Execute(opts.Context, opts.IO.Out, opts.IO.ErrOut, res.Topology, res.Diags, r, lo)
}
