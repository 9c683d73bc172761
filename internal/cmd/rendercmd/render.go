// Package rendercmd is the render command.
package rendercmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/render"
)

// Options are render's settings.
type Options struct {
	IO     *cmdutil.IOStreams
	Path   string
	By     string
	Render render.Options
	// TargetVersion is --target-version: the upstream whose rules apply.
	TargetVersion string
}

// NewCmdRender returns the render command; runF, when not nil, runs in
// place of renderRun.
func NewCmdRender(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "render LAYOUT|-",
		Short: "Print every module's process groups",
		Long: `Print the process groups of every module exactly as Megatron's
HyperCommGrid builds them.

  mimoplan render layout.yaml                      tables, long lists folded
  mimoplan render layout.yaml --format json        the plan JSON
  mimoplan render layout.yaml --rank 5             the groups of rank 5
  mimoplan render layout.yaml --format html > map.html   the rank map page
  mimoplan render layout.yaml --format svg --group dp    the picture, dp outlined
  mimoplan render layout.yaml --all-groups         a row for every group kind
  mimoplan render layout.yaml --by rank            one row per rank (64 a page)
  mimoplan render layout.yaml --by rank --offset 64 --limit 128
  mimoplan render layout.yaml --by rank --group tp,dp   with each rank's groups
  mimoplan render layout.yaml --module language --group tp,pp
  mimoplan render - < layout.yaml                  the layout from standard input

Tables fit the terminal's width (or COLUMNS, or 80 when the output is
not a terminal). A table folds what says nothing: group kinds whose groups
are single ranks go on one "singletons:" line, kinds with identical groups
share a row (dp = dp_cp), and long lists show their first groups.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			o := &opts.Render
			o.HasRank = cmd.Flags().Changed("rank") // by flag, variable or file
			o.ByRank = opts.By == "rank"
			o.Width = cmdutil.TerminalWidth(opts.IO.Out, render.DefaultWidth)
			if runF != nil {
				return runF(opts)
			}
			return renderRun(opts)
		},
	}
	fs, o := cmd.Flags(), &opts.Render
	cmdutil.FormatVar(fs, &o.Format, render.Formats...)
	fs.StringSliceVar(&o.Modules, "module", nil, "only these modules (repeat or comma-separate)")
	fs.StringSliceVar(&o.Groups, "group", nil, "only these group kinds, e.g. tp,dp,ep")
	fs.IntVar(&o.Rank, "rank", -1, "only the groups this global rank belongs to, with its coordinates")
	cmdutil.StringEnumVar(fs, &opts.By, "by", "group", "row per: group or rank", "group", "rank")
	fs.BoolVar(&o.Full, "full", false, "do not fold long lists in tables; --by rank: every rank")
	fs.BoolVar(&o.AllGroups, "all-groups", false, "a table row for every group kind, none folded")
	fs.IntVar(&o.Limit, "limit", 0, "--by rank: print this many ranks (default: all, or 64 in a table)")
	fs.IntVar(&o.Offset, "offset", 0, "--by rank: start at this rank")
	cmdutil.AddTargetVersionFlag(fs, &opts.TargetVersion)
	return cmd
}

func renderRun(opts *Options) error {
	loader, err := cmdutil.LayoutFlags{TargetVersion: opts.TargetVersion}.NewLoader(nil, opts.IO.In)
	if err != nil {
		return err
	}
	res, err := loader.Load(opts.Path)
	if err != nil {
		return err
	}
	if err := render.Accept(opts.IO.ErrOut, res.Topology, res.Diags); err != nil {
		return err
	}
	o := opts.Render
	o.Notes, o.Diags = res.Diags.Notes, res.Diags.Items // for the html page
	err = render.Render(opts.IO.Out, res.Topology, o)
	var ue *render.UsageError
	if errors.As(err, &ue) {
		return exitcode.Usagef("%v", ue)
	}
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	return nil
}
