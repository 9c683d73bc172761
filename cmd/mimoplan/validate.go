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
		Use:   "validate LAYOUT [LAYOUT...]",
		Short: "Check layouts against Megatron's MIMO rules",
		Long: `Check each layout against the rules of Megatron's MIMO runtime and print
every problem found, with file:line:column, a rule id and a hint.

Formats: text (the default), json (one JSON object per file), github
(GitHub Actions workflow commands, which annotate the files in a pull
request) and sarif (one SARIF 2.1.0 log for all files, for code scanning).

With --probe, this machine's GPUs are checked too (through NVML), as one
node of each layout: enough visible GPUs for cluster.gpus_per_node (or
world_size, for a layout without cluster), one GPU model, MIG off, and a
CUDA_VISIBLE_DEVICES that names real GPUs.

Exit codes: 0 every layout valid, 1 a layout is invalid, 2 usage error,
3 --probe without an NVIDIA driver or NVML. Warnings keep exit code 0
unless --strict.`,
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
		gpus, err := localGPUs(cmd)
		if err != nil {
			return err
		}
		tv, err := targetVersion(v)
		if err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		code := exitOK
		var lists []*diag.List // for sarif: one log for every file
		for _, path := range args {
			res, err := validate.LoadAt(path, tv)
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "mimoplan: %v\n", err)
				code = max(code, exitUsage)
				continue
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

// loadValid loads a layout for commands that need a valid one
// (launch-plan, preflight), checking this machine's GPUs too when the
// command has --probe set. On an invalid layout it prints the diagnostics
// to stderr and returns the error that ends the command with exit 1.
func loadValid(cmd *cobra.Command, path string) (*validate.Result, error) {
	gpus, err := localGPUs(cmd)
	if err != nil {
		return nil, err
	}
	var tv *upstream.Version
	if cmd.Flags().Lookup("target-version") != nil {
		if tv, err = targetVersion(config(cmd)); err != nil {
			return nil, err
		}
	}
	res, err := validate.LoadAt(path, tv)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	checkGPUs(gpus, res)
	if !res.Valid(false) {
		if err := report(cmd.ErrOrStderr(), "text", res, false); err != nil {
			return nil, err
		}
		return nil, silentExit(exitInvalid)
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
