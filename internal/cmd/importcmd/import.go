// Package importcmd is the import command: a layout from the launch of an
// existing job.
package importcmd

import (
	"fmt"
	"github.com/mimoplan/mimoplan/internal/atomicfile"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/importer"
)

// Options are the settings of both import commands.
type Options struct {
	IO *cmdutil.IOStreams
	// Source is "megatron-lm" or "bridge-env".
	Source string
	// Argv is the launch's argv (megatron-lm).
	Argv    []string
	Encoder string
	// FromScript is the script to read the MIMO_* variables from
	// (bridge-env); "" reads the environment.
	FromScript string
	Name, Out  string
}

// NewCmdImport returns the import command with its two subcommands; runF,
// when not nil, runs in place of importRun.
func NewCmdImport(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import megatron-lm|bridge-env",
		Short: "Write the layout of an existing launch",
		Long: `Turn what a job is launched with back into a layout.

  mimoplan import megatron-lm -- torchrun --nnodes=1 --nproc-per-node=8 \
      examples/mimo/pretrain_mimo.py --mimo-encoder-tp 2 --mimo-llm-offset 4 ...
  mimoplan import bridge-env                    the MIMO_* variables set now
  mimoplan import bridge-env --from-script run.sh

The layout is checked like any other (exit 1 with its diagnostics when it
is invalid) and written to standard output or --out. See docs/import.md.

Exit codes: 0 layout written, 1 the launch describes an invalid layout,
2 usage error (unreadable arguments or variables).`,
	}
	run := func(o *Options) error {
		if runF != nil {
			return runF(o)
		}
		return importRun(o)
	}
	cmd.AddCommand(newCmdMegatron(f, run), newCmdBridge(f, run))
	return cmd
}

func bindCommon(cmd *cobra.Command, opts *Options) {
	cmd.Flags().StringVar(&opts.Name, "name", "", "the layout's name")
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the layout to this file, atomically (default: standard output)")
}

func importRun(o *Options) error {
	var l *importer.Layout
	var err error
	if o.Source == "megatron-lm" {
		l, err = importer.MegatronLM(o.Argv, o.Encoder)
	} else {
		l, err = importer.BridgeSource(o.FromScript, os.Environ())
	}
	if err != nil {
		return exitcode.Usagef("import %s: %v", o.Source, err)
	}
	l.Name = o.Name
	return write(o, l)
}

// write checks the imported layout and writes it.
func write(o *Options, l *importer.Layout) error {
	file := "imported layout"
	if o.Out != "" {
		file = o.Out
	}
	text, res, err := l.Check(file)
	if err != nil {
		return err
	}
	if !res.Valid(false) {
		if err := diag.WriteText(o.IO.ErrOut, res.Diags); err != nil {
			return err
		}
		fmt.Fprintf(o.IO.ErrOut, "mimoplan: the launch describes an invalid layout:\n%s", text)
		return exitcode.Silent(exitcode.Invalid)
	}
	if o.Out == "" {
		_, err := io.WriteString(o.IO.Out, text)
		return err
	}
	if err := atomicfile.WriteFilesNotOver([]string{o.FromScript}, atomicfile.File{Path: o.Out, Mode: 0o644, Write: func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	}}); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "mimoplan: wrote the layout to %s\n", o.Out)
	return nil
}
