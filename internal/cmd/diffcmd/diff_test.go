package diffcmd

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		io := &cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
		var got *Options
		cmd := NewCmdDiff(&cmdutil.Factory{IOStreams: io}, func(o *Options) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		require.NoError(t, cmd.Execute())
		tt.want.IO = io
		tt.want.Width = cmdutil.TerminalWidth(io.Out, render.DefaultWidth)
		assert.Equal(t, &tt.want, got)
	}

	for _, args := range [][]string{{"a.yaml"}, {"a.yaml", "b.yaml", "c.yaml"}, {"a.yaml", "b.yaml", "--format", "html"}} {
		io := &cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
		cmd := NewCmdDiff(&cmdutil.Factory{IOStreams: io}, func(*Options) error { t.Fatal("ran"); return nil })
		cmd.SetFlagErrorFunc(cmdutil.FlagError)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		cmd.SetArgs(args)
		assert.Error(t, cmd.Execute(), "%v", args)
	}
}
