// Package cmdtest runs a command the way the command tests check it (tests
// only): built by its NewCmdX(f, runF) with a runF that records the
// Options it is given instead of running, over streams that write to
// buffers. It is apart from testutil because cmdutil imports layout,
// model and validate, whose tests import testutil.
package cmdtest

import (
	"bytes"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
)

// Factory is a Factory whose streams write to buffers, stdin empty.
func Factory() *cmdutil.Factory {
	return &cmdutil.Factory{IOStreams: &cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
}

// Run executes the command newCmd builds over f with args as root.Execute
// would (flag errors are usage errors, cobra prints nothing) and returns
// the Options runF was given: nil when it did not run.
func Run[O any](f *cmdutil.Factory, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, args []string) (*O, error) {
	var got *O
	cmd := newCmd(f, func(o *O) error { got = o; return nil })
	cmd.SetFlagErrorFunc(cmdutil.FlagError)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetArgs(append([]string{}, args...)) // never nil: nil is os.Args
	return got, cmd.Execute()
}
