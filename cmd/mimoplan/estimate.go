package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/upstream"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func init() { register(newEstimateCmd) }

var estimateFormats = []string{"table", "json"}

// estimateOptions are estimate's flags, read once.
type estimateOptions struct {
	Layout string
	Format string
	Target *upstream.Version
}

func newEstimateCmd() *cobra.Command {
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
	}
	cmd.Flags().String("format", "table", "output format: "+strings.Join(estimateFormats, ", "))
	addTargetVersionFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v := config(cmd)
		o := &estimateOptions{Layout: args[0], Format: v.GetString("format")}
		if err := oneOf("format", o.Format, estimateFormats...); err != nil {
			return err
		}
		tv, err := targetVersion(v)
		if err != nil {
			return err
		}
		o.Target = tv
		res, err := loadLayout(cmd, o.Layout, o.Target)
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		return runEstimate(o, res, cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	return cmd
}

func runEstimate(o *estimateOptions, res *validate.Result, stdout, stderr io.Writer) error {
	if len(res.Diags.Items) > 0 {
		if err := diag.WriteText(stderr, res.Diags); err != nil {
			return err
		}
	}
	var err error
	if o.Format == "json" {
		err = printEstimateJSON(stdout, res)
	} else {
		err = printEstimateTable(stdout, res)
	}
	if err != nil {
		return err
	}
	if res.Diags.HasErrors() {
		return silentExit(exitInvalid)
	}
	return nil
}
