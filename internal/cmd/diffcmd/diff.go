// Package diffcmd is the diff command.
package diffcmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/diff"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// Options is what diff needs: the two layouts, the format and where to
// write.
type Options struct {
	IO     *cmdutil.IOStreams
	A, B   string
	Format string
	Width  int
}

// NewCmdDiff returns the diff command; runF, when not nil, runs in place
// of diffRun (for tests of the flag wiring).
func NewCmdDiff(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
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
		RunE: func(_ *cobra.Command, args []string) error {
			opts.A, opts.B = args[0], args[1]
			opts.Width = cmdutil.TerminalWidth(opts.IO.Out, render.DefaultWidth)
			if runF != nil {
				return runF(opts)
			}
			return diffRun(opts)
		},
	}
	cmdutil.FormatVar(cmd.Flags(), &opts.Format, cmdutil.Text, "json")
	return cmd
}

func diffRun(o *Options) error {
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
		err = r.WriteJSON(o.IO.Out)
	} else {
		err = r.WriteText(o.IO.Out, o.Width)
	}
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	if !r.Identical {
		return exitcode.Silent(exitcode.Invalid)
	}
	return nil
}

// loadForDiff reads a layout; one whose grid cannot be built is trouble
// (exit 2), since exit 1 means "the layouts differ".
func loadForDiff(o *Options, path string) (*validate.Result, error) {
	res, err := validate.Load(path)
	if err != nil {
		return nil, exitcode.Wrap(exitcode.Usage, err)
	}
	if res.Topology == nil {
		if err := diag.WriteText(o.IO.ErrOut, res.Diags); err != nil {
			return nil, err
		}
		return nil, exitcode.Usagef("%s: the layout fails the core rules; nothing to compare", path)
	}
	return res, nil
}
