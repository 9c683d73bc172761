// Package validatecmd is the validate command.
package validatecmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// Options are validate's settings.
type Options struct {
	IO         *cmdutil.IOStreams
	ProbeLocal func() (*gpuprobe.Snapshot, error)

	Paths  []string
	Format string
	Strict bool
	Layout cmdutil.LayoutFlags
}

// NewCmdValidate returns the validate command; runF, when not nil, runs
// in place of validateRun (tests check the Options that flags make).
func NewCmdValidate(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, ProbeLocal: f.ProbeLocal}
	cmd := &cobra.Command{
		Use:   "validate LAYOUT|- [LAYOUT...]",
		Short: "Check layouts against Megatron's MIMO rules",
		Long: `Check each layout against the rules of Megatron's MIMO runtime and print
every problem found, with file:line:column, a rule id and a hint.

Formats: text (the default), json (one JSON object per file), github
(GitHub Actions workflow commands, which annotate the files in a pull
request) and sarif (one SARIF 2.1.0 log for all files, for code scanning).
'-' reads a layout from standard input. A file that cannot be read is
reported on stderr and, in json and sarif, as an entry of its own with
the rule unreadable-file, so that a CI consumer sees it.

With --probe, this machine's GPUs are checked too (through NVML), as one
node of each layout: enough visible GPUs for cluster.gpus_per_node (or
world_size, for a layout without cluster), one GPU model, MIG off, and a
CUDA_VISIBLE_DEVICES that names real GPUs. Without NVML the layouts'
own diagnostics are printed first, then why the probe failed.

Exit codes: 0 every layout valid, 1 a layout is invalid, 2 usage error,
3 --probe without an NVIDIA driver or NVML (when every layout is
valid). Warnings keep exit code 0 unless --strict.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return validateRun(opts)
		},
	}
	fs := cmd.Flags()
	cmdutil.FormatVar(fs, &opts.Format, diag.Formats()...)
	fs.BoolVar(&opts.Strict, "strict", false, "treat warnings as errors")
	opts.Layout.Bind(fs)
	return cmd
}

func validateRun(opts *Options) error {
	format, err := diag.ParseFormat(opts.Format)
	if err != nil {
		return exitcode.Usagef("%v", err)
	}
	if err := cmdutil.StdinOnce(opts.Paths); err != nil {
		return err
	}
	// Without NVML the layouts are still checked and reported; the
	// probe's failure comes after them.
	loader, err := opts.Layout.NewLoader(opts.ProbeLocal, opts.IO.In)
	if err != nil {
		return err
	}
	code := exitcode.OK
	var lists []*diag.List
	for _, path := range opts.Paths {
		res, err := loader.Load(path)
		if err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "mimoplan: %v\n", err)
			code = max(code, exitcode.Usage)
			if format != diag.FormatJSON && format != diag.FormatSARIF {
				continue
			}
			// Machine-read formats get an entry too, so that a CI
			// consumer sees the file was not checked.
			res = validate.Unreadable(path, errors.Unwrap(err))
		}
		if !res.Valid(opts.Strict) {
			code = max(code, exitcode.Invalid)
		}
		if format == diag.FormatSARIF {
			lists = append(lists, res.Diags) // one log for every file
		} else if err := diag.Print(opts.IO.Out, []*diag.List{res.Diags}, format, opts.Strict); err != nil {
			return err
		}
	}
	if format == diag.FormatSARIF {
		if err := diag.Print(opts.IO.Out, lists, format, opts.Strict); err != nil {
			return err
		}
	}
	if loader.ProbeErr != nil {
		fmt.Fprintf(opts.IO.ErrOut, "mimoplan: %v\n", loader.ProbeErr)
		if code == exitcode.OK {
			return exitcode.Silent(exitcode.NoGPU)
		}
	}
	return exitcode.Silent(code)
}
