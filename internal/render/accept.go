package render

import (
	"fmt"
	"io"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// Accept decides whether a checked layout can be rendered. render needs
// only the groups, so it refuses a layout only when they could not be
// built (t is nil: a core rule failed), writing its report to w and
// returning exit 1's error. Runtime rules (a communicator or target that
// cannot run the layout) do not change the groups: their errors are
// written to w and rendering goes on; validate and launch-plan fail on
// them.
func Accept(w io.Writer, t *topo.Topology, d *diag.List) error {
	if t == nil {
		if err := diag.Print(w, []*diag.List{d}, diag.FormatText, false); err != nil {
			return err
		}
		return exitcode.Silent(exitcode.Invalid)
	}
	if d.HasErrors() {
		if err := diag.WriteText(w, d); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "%s: these groups are exact, but the target runtime cannot run this layout: see 'mimoplan validate'\n", d.File)
		return err
	}
	return nil
}
