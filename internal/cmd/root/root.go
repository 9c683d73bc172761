// Package root is mimoplan's root command: it lists the commands, reads
// the configuration before any of them runs, and turns errors into exit
// codes.
package root

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmd/diffcmd"
	"github.com/mimoplan/mimoplan/internal/cmd/estimatecmd"
	"github.com/mimoplan/mimoplan/internal/cmd/importcmd"
	"github.com/mimoplan/mimoplan/internal/cmd/launchplancmd"
	"github.com/mimoplan/mimoplan/internal/cmd/preflightcmd"
	"github.com/mimoplan/mimoplan/internal/cmd/probecmd"
	"github.com/mimoplan/mimoplan/internal/cmd/rendercmd"
	"github.com/mimoplan/mimoplan/internal/cmd/suggestcmd"
	"github.com/mimoplan/mimoplan/internal/cmd/validatecmd"
	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/safetext"
)

// NewCmdRoot returns the root command with every subcommand.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "mimoplan",
		Short: "Plan and validate heterogeneous MIMO training layouts for Megatron",
		Long: `mimoplan reads a MIMO layout (YAML), expands every module into the exact
process groups Megatron's HyperCommGrid builds, checks the layout against the
rules of the target runtime, and prints group tables or a launch plan.

Exit codes: 0 valid, 1 invalid input, 2 usage error, 3 no NVIDIA driver/NVML.`,
		Version:       f.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(cmdutil.FlagError)
	var configFile string
	root.PersistentFlags().StringVar(&configFile, "config", "", "config file of flag defaults (default: $XDG_CONFIG_HOME/mimoplan/config.yaml, else ./"+cmdutil.LocalConfigFile+")")
	var verbose bool
	root.PersistentFlags().BoolVar(&verbose, "verbose", false, "say on stderr which config file was read")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if configFile == "" {
			configFile = os.Getenv(cmdutil.EnvKey("config"))
		}
		cfg, err := cmdutil.LoadConfig(cmdutil.ConfigFile(configFile, f.ConfigDir))
		if err != nil {
			return err
		}
		// A config file found in the working directory is named on
		// stderr's first line whatever --verbose says: it came with the
		// directory, not from the user.
		if verbose || cfg.Local {
			fmt.Fprintln(f.IOStreams.ErrOut, cfg.Describe())
		}
		if err := cfg.Check(root); err != nil {
			return err
		}
		return cfg.Apply(cmd)
	}
	// The commands, in the order of the README.
	root.AddCommand(
		validatecmd.NewCmdValidate(f, nil),
		rendercmd.NewCmdRender(f, nil),
		launchplancmd.NewCmdLaunchPlan(f, nil),
		preflightcmd.NewCmdPreflight(f, nil),
		probecmd.NewCmdProbe(f, nil),
		estimatecmd.NewCmdEstimate(f, nil),
		suggestcmd.NewCmdSuggest(f, nil),
		diffcmd.NewCmdDiff(f, nil),
		importcmd.NewCmdImport(f, nil),
	)
	cmdutil.EnumCompletions(root)
	return root
}

// Execute runs the command line args and returns the exit code.
func Execute(f *cmdutil.Factory, args []string) int {
	// Standard output through a writer that remembers its first error: a
	// printer that drops a write error (a table library, cobra's help)
	// still ends the run with exit 2 (suggest > /dev/full exited 0).
	out := &errWriter{w: f.IOStreams.Out}
	streams := *f.IOStreams
	streams.Out = out
	fc := *f
	fc.IOStreams = &streams
	root := NewCmdRoot(&fc)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	err := root.Execute()
	if err == nil && out.err != nil {
		err = exitcode.Wrap(exitcode.Usage, fmt.Errorf("write standard output: %w", out.err))
	}
	if err == nil {
		return exitcode.OK
	}
	var ee *exitcode.Error
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(streams.ErrOut, "mimoplan: %s\n", safetext.Inline(ee.Err.Error()))
		}
		return ee.Code
	}
	// Anything cobra itself rejects (unknown command, wrong argument
	// count) is a usage error.
	fmt.Fprintf(streams.ErrOut, "mimoplan: %s\n", safetext.Inline(err.Error()))
	return exitcode.Usage
}

// errWriter passes writes to w and keeps the first error; after one it
// writes nothing more.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		e.err = err
	}
	return n, err
}
