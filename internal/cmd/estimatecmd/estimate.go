// Package estimatecmd is the estimate command.
package estimatecmd

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/estimate"
	"github.com/mimoplan/mimoplan/internal/exitcode"
)

// Options are estimate's settings.
type Options struct {
	IO            *cmdutil.IOStreams
	Layout        string
	Format        string
	TargetVersion string
	// Measured is a measured results file (testdata/measured/README.md)
	// and MeasuredConfig the run in it (default: the layout's file name);
	// --format html draws its figures beside the estimate.
	Measured       string
	MeasuredConfig string
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
measured per-GPU overheads (docs/estimate.md). --format json has both;
--format html draws each module's terms as a stacked bar against the GPU's
memory, with the measured figure beside it when --measured names a
measured results file (its run --measured-run, by default the layout's
name).

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
	cmdutil.FormatVar(cmd.Flags(), &opts.Format, cmdutil.Text, "json", "html")
	cmdutil.AddTargetVersionFlag(cmd.Flags(), &opts.TargetVersion)
	cmd.Flags().StringVar(&opts.Measured, "measured", "", "measured results `FILE` whose run --format html shows beside the estimate")
	// Not --config: that is every command's config file (root's persistent flag).
	cmd.Flags().StringVar(&opts.MeasuredConfig, "measured-run", "", "the measured run's `NAME` (default: the layout file's name without .yaml)")
	return cmd
}

func estimateRun(o *Options) error {
	if o.Measured != "" && o.Format != "html" {
		return exitcode.Usagef("--measured is read by --format html only")
	}
	measured, err := o.readMeasured()
	if err != nil {
		return err
	}
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
	switch o.Format {
	case "json":
		err = estimate.PrintJSON(o.IO.Out, res)
	case "html":
		err = estimate.PrintHTML(o.IO.Out, res, measured)
	default:
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

// readMeasured reads --measured's run, if any.
func (o *Options) readMeasured() (map[string]estimate.Measured, error) {
	if o.Measured == "" {
		return nil, nil
	}
	f, err := os.Open(o.Measured)
	if err != nil {
		return nil, exitcode.Usagef("--measured: %v", err)
	}
	defer f.Close()
	name := o.MeasuredConfig
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(o.Layout), filepath.Ext(o.Layout))
	}
	m, err := estimate.ReadMeasured(f, name)
	if err != nil {
		return nil, exitcode.Usagef("--measured %s: %v", o.Measured, err)
	}
	return m, nil
}
