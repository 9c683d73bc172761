package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func init() { register(newRenderCmd) }

func newRenderCmd() *cobra.Command {
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
	}
	f := cmd.Flags()
	f.String("format", "table", "output format: "+strings.Join(render.Formats, ", "))
	f.StringSlice("module", nil, "only these modules (repeat or comma-separate)")
	f.StringSlice("group", nil, "only these group kinds, e.g. tp,dp,ep")
	f.Int("rank", -1, "only the groups this global rank belongs to, with its coordinates")
	f.String("by", "group", "row per: group or rank")
	f.Bool("full", false, "do not fold long lists in tables; --by rank: every rank")
	f.Bool("all-groups", false, "a table row for every group kind, none folded")
	f.Int("limit", 0, "--by rank: print this many ranks (default: all, or 64 in a table)")
	f.Int("offset", 0, "--by rank: start at this rank")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v := config(cmd)
		by := v.GetString("by")
		if err := oneOf("by", by, "group", "rank"); err != nil {
			return err
		}
		o := render.Options{
			Format:  v.GetString("format"),
			Modules: v.GetStringSlice("module"),
			Groups:  v.GetStringSlice("group"),
			Rank:    v.GetInt("rank"),
			HasRank: cmd.Flags().Changed("rank"), // by flag or MIMOPLAN_RANK
			ByRank:  by == "rank",
			Full:    v.GetBool("full"),

			AllGroups: v.GetBool("all-groups"),
			Limit:     v.GetInt("limit"),
			Offset:    v.GetInt("offset"),
			Width:     termWidth(cmd.OutOrStdout()),
		}
		if err := oneOf("format", o.Format, render.Formats...); err != nil {
			return err
		}
		res, err := loadTopology(cmd, args[0])
		if err != nil {
			return err
		}
		o.Notes, o.Diags = res.Facts, res.Diags.Items
		err = render.Render(cmd.OutOrStdout(), res.Topology, o)
		var ue *render.UsageError
		if errors.As(err, &ue) {
			return usageErr("%v", ue)
		}
		if err != nil {
			return fmt.Errorf("render: %w", err)
		}
		return nil
	}
	return cmd
}

// termWidth is the width tables fit: COLUMNS when set to a number, else
// the terminal's when the output is one, else render's default.
func termWidth(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if n, _, err := term.GetSize(int(f.Fd())); err == nil && n > 0 {
			return n
		}
	}
	return render.DefaultWidth
}

// loadTopology loads a layout for render, which needs only the groups: it
// fails (exit 1) when the core rules do, since then no grid can be built.
// Runtime rules (a communicator or target that cannot run the layout) do
// not change the groups, so they are printed on stderr and rendering goes
// on; validate and launch-plan fail on them.
func loadTopology(cmd *cobra.Command, path string) (*validate.Result, error) {
	res, err := loadLayout(cmd, path, nil)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if res.Topology == nil {
		if err := report(cmd.ErrOrStderr(), "text", res, false); err != nil {
			return nil, err
		}
		return nil, silentExit(exitInvalid)
	}
	if res.Diags.HasErrors() {
		w := cmd.ErrOrStderr()
		if err := diag.WriteText(w, res.Diags); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "%s: these groups are exact, but the target runtime cannot run this layout: see 'mimoplan validate'\n", path)
	}
	return res, nil
}
