package diffcmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmd/cmdtest"
	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/render"
)

// The arguments and flags land in Options; runF stands in for diffRun.
func TestNewCmdDiff(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want Options
	}{
		{[]string{"a.yaml", "b.yaml"}, Options{A: "a.yaml", B: "b.yaml", Format: "text"}},
		{[]string{"a.yaml", "b.yaml", "--format", "json"}, Options{A: "a.yaml", B: "b.yaml", Format: "json"}},
		{[]string{"a.yaml", "b.yaml", "--format", "table"}, Options{A: "a.yaml", B: "b.yaml", Format: "text"}},
	} {
		f := cmdtest.Factory()
		got, err := cmdtest.Run(f, NewCmdDiff, tt.args)
		require.NoError(t, err)
		tt.want.IO = f.IOStreams
		tt.want.Width = cmdutil.TerminalWidth(f.IOStreams.Out, render.DefaultWidth)
		assert.Equal(t, &tt.want, got)
	}

	for _, args := range [][]string{{"a.yaml"}, {"a.yaml", "b.yaml", "c.yaml"}, {"a.yaml", "b.yaml", "--format", "html"}} {
		got, err := cmdtest.Run(cmdtest.Factory(), NewCmdDiff, args)
		assert.Nil(t, got, "runF ran: %v", args)
		assert.Error(t, err, "%v", args)
	}
}
