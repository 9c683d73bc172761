// Package estimatecmd is the estimate command.
package estimatecmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/estimate"
	"github.com/mimoplan/mimoplan/internal/exitcode"
)

var formats = []string{"table", "json"}

// Options are estimate's settings.
type Options struct {
	IO            *cmdutil.IOStreams
	Layout        string
	Format        string
	TargetVersion string
}

// NewCmdEstimate returns the estimate command; runF, when not nil, runs in
// place of estimateRun.
func NewCmdEstimate(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "estimate LAYOUT",
		Short: "Print each module's parameters, memory per GPU and FLOPs per sample",
		Long: `For every module with a model, print its parameters (total and active),
weight and optimizer bytes, activation bytes and total bytes on its most
loaded GPU (the first pipeline stage), and its FLOPs per sample: Megatron-LM's
own figures (megatron/training/theoretical_memory_usage.py and
num_floating_point_operations in training.py) with the module as the job, and
mimoplan's, which adds named terms for what that formula ignores and the
measured per-GPU overheads (docs/estimate.md). --format json has both.

The layout is validated first: its diagnostics go to standard error, and
modules whose sizes or model break a rule are not estimated.

Exit codes: 0 valid, 1 the layout has an error (gpu-memory-short included),
2 usage error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Layout = args[0]
			if runF != nil {
				return runF(opts)
			}
			return estimateRun(opts)
		},
	}
	cmdutil.StringEnumVar(cmd.Flags(), &opts.Format, "format", "table", "output format: "+strings.Join(formats, ", "), formats...)
	cmdutil.AddTargetVersionFlag(cmd.Flags(), &opts.TargetVersion)
	return cmd
}

func estimateRun(o *Options) error {
	loader, err := cmdutil.LayoutFlags{TargetVersion: o.TargetVersion}.NewLoader(nil, o.IO.In)
	if err != nil {
		return err
	}
	res, err := loader.Load(o.Layout)
	if err != nil {
		return err
	}
	if len(res.Diags.Items) > 0 {
		if err := diag.WriteText(o.IO.ErrOut, res.Diags); err != nil {
			return err
		}
	}
	if o.Format == "json" {
		err = estimate.PrintJSON(o.IO.Out, res)
	} else {
		err = estimate.PrintTable(o.IO.Out, res)
	}
	if err != nil {
		return err
	}
	if res.Diags.HasErrors() {
		return exitcode.Silent(exitcode.Invalid)
	}
	return nil
}
