package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/diff"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func init() { register(func() *cobra.Command { return newDiffCmd(nil) }) }

// diffOptions is what diff needs: the two layouts, the format and where
// to write.
type diffOptions struct {
	Out, ErrOut io.Writer
	A, B        string
	Format      string
	Width       int
}

var diffFormats = []string{"text", "json"}

// newDiffCmd builds the command; run, when not nil, replaces diffRun (for
// tests of the flag wiring).
func newDiffCmd(run func(*diffOptions) error) *cobra.Command {
	opts := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff A.yaml B.yaml",
		Short: "What changes between two layouts: sizes, groups, ranks, batch",
		Long: `Compare two layouts by what they build: per module the sizes that differ,
the group kinds whose groups change and how many ranks end up with other
group mates, the ranks that change module, node or pipeline stage, and the
batch arithmetic (micro-batches, fan-out) that changes: what decides
whether a checkpoint can be reused as it is or must be resharded.

Groups are compared as sets of ranks, per module (by name) and kind.

Exit codes, as diff(1): 0 every module has the same groups of every kind,
1 the groups differ, 2 trouble (a usage error, an unreadable file, or a
layout that fails the core rules, whose problems are printed).`,
		Args: cobra.ExactArgs(2),
	}
	cmd.Flags().String("format", "text", "output format: text, json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v := config(cmd)
		opts.Out, opts.ErrOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
		opts.A, opts.B = args[0], args[1]
		opts.Format = v.GetString("format")
		opts.Width = termWidth(opts.Out)
		if err := oneOf("format", opts.Format, diffFormats...); err != nil {
			return err
		}
		if run != nil {
			return run(opts)
		}
		return diffRun(opts)
	}
	return cmd
}

func diffRun(o *diffOptions) error {
	a, err := loadForDiff(o, o.A)
	if err != nil {
		return err
	}
	b, err := loadForDiff(o, o.B)
	if err != nil {
		return err
	}
	r := diff.Compare(o.A, a, o.B, b)
	if o.Format == "json" {
		err = r.WriteJSON(o.Out)
	} else {
		err = r.WriteText(o.Out, o.Width)
	}
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	if !r.Identical {
		return silentExit(exitInvalid)
	}
	return nil
}

// loadForDiff reads a layout; one whose grid cannot be built is trouble
// (exit 2), since exit 1 means "the layouts differ".
func loadForDiff(o *diffOptions, path string) (*validate.Result, error) {
	res, err := validate.Load(path)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if res.Topology == nil {
		if err := diag.WriteText(o.ErrOut, res.Diags); err != nil {
			return nil, err
		}
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s: the layout fails the core rules; nothing to compare", path)}
	}
	return res, nil
}
