package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/upstream"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func init() { register(newValidateCmd) }

// validateFormats are the output formats of validate.
var validateFormats = []string{"text", "json", "github", "sarif"}

func newValidateCmd() *cobra.Command {
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
	}
	cmd.Flags().String("format", "text", "output format: text, json, github, sarif")
	cmd.Flags().Bool("strict", false, "treat warnings as errors")
	addTargetVersionFlag(cmd)
	addProbeFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v := config(cmd)
		format, strict := v.GetString("format"), v.GetBool("strict")
		if err := oneOf("format", format, validateFormats...); err != nil {
			return err
		}
		if err := stdinOnce(args); err != nil {
			return err
		}
		tv, err := targetVersion(v)
		if err != nil {
			return err
		}
		// Without NVML the layouts are still checked and reported; the
		// probe's failure comes after them.
		gpus, probeErr := localGPUs(cmd)
		w := cmd.OutOrStdout()
		code := exitOK
		var lists []*diag.List // for sarif: one log for every file
		for _, path := range args {
			res, err := loadLayout(cmd, path, tv)
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "mimoplan: %v\n", err)
				code = max(code, exitUsage)
				if format != "json" && format != "sarif" {
					continue
				}
				// Machine-read formats get an entry too, so that a CI
				// consumer sees the file was not checked.
				res = unreadable(path, err)
			}
			checkGPUs(gpus, res)
			if format == "sarif" {
				lists = append(lists, res.Diags)
			} else if err := report(w, format, res, strict); err != nil {
				return err
			}
			if !res.Valid(strict) {
				code = max(code, exitInvalid)
			}
		}
		if format == "sarif" {
			if err := diag.WriteSARIF(w, lists); err != nil {
				return err
			}
		}
		if probeErr != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "mimoplan: %v\n", probeErr)
			if code == exitOK {
				return silentExit(exitNoGPU)
			}
		}
		return silentExit(code)
	}
	return cmd
}

// report prints one file's result in the given format.
func report(w interface{ Write([]byte) (int, error) }, format string, res *validate.Result, strict bool) error {
	switch format {
	case "json":
		r := diag.NewReport(res.Diags, strict)
		r.Notes = res.Facts
		return diag.WriteJSON(w, r)
	case "github":
		// Workflow commands annotate the files; the summary line is
		// ordinary log output for whoever reads the job's log.
		if err := diag.WriteGitHub(w, res.Diags); err != nil {
			return err
		}
		_, err := fmt.Fprintln(w, res.Summary(strict))
		return err
	case "sarif":
		return diag.WriteSARIF(w, []*diag.List{res.Diags})
	default:
		if err := diag.WriteText(w, res.Diags); err != nil {
			return err
		}
		for _, f := range res.Facts {
			fmt.Fprintf(w, "%s: note: %s\n", res.Diags.File, f)
		}
		_, err := fmt.Fprintln(w, res.Summary(strict))
		return err
	}
}

// unreadable is the result for a file that could not be read: one
// unreadable-file error, without position.
func unreadable(path string, err error) *validate.Result {
	d := &diag.List{File: path}
	d.Add("unreadable-file", diag.Pos{}, "", "check the path and its permissions; give a regular file, or '-' for standard input", "%v", err)
	return &validate.Result{Diags: d}
}

// loadValid loads a layout for commands that need a valid one
// (launch-plan, preflight), checking this machine's GPUs too when the
// command has --probe set. On an invalid layout it prints the diagnostics
// to stderr and returns the error that ends the command with exit 1.
//
// Without NVML (--probe), the layout's own diagnostics come first, then the
// probe's error: exit 1 when the layout is invalid, else 3.
func loadValid(cmd *cobra.Command, path string) (*validate.Result, error) {
	gpus, probeErr := localGPUs(cmd)
	var tv *upstream.Version
	if cmd.Flags().Lookup("target-version") != nil {
		var err error
		if tv, err = targetVersion(config(cmd)); err != nil {
			return nil, err
		}
	}
	res, err := loadLayout(cmd, path, tv)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	checkGPUs(gpus, res)
	stderr := cmd.ErrOrStderr()
	if !res.Valid(false) {
		if err := report(stderr, "text", res, false); err != nil {
			return nil, err
		}
		if probeErr != nil {
			fmt.Fprintf(stderr, "mimoplan: %v\n", probeErr)
		}
		return nil, silentExit(exitInvalid)
	}
	if probeErr != nil {
		if err := diag.WriteText(stderr, res.Diags); err != nil {
			return nil, err
		}
		return nil, probeErr
	}
	return res, nil
}

// addTargetVersionFlag adds --target-version, which replaces the layouts'
// target_version.
func addTargetVersionFlag(cmd *cobra.Command) {
	cmd.Flags().String("target-version", "", "upstream version whose rules and argument names apply, over the layout's target_version: "+upstream.Help()+"; default the newest")
}

// targetVersion reads --target-version (or MIMOPLAN_TARGET_VERSION): nil
// when not given.
func targetVersion(v *viper.Viper) (*upstream.Version, error) {
	s := v.GetString("target-version")
	if s == "" {
		return nil, nil
	}
	tv, err := upstream.Parse(s)
	if err != nil {
		return nil, usageErr("--target-version: %v", err)
	}
	return &tv, nil
}
