package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/importer"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func init() { register(newImportCmd) }

func newImportCmd() *cobra.Command {
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
	cmd.AddCommand(newImportMegatronCmd(), newImportBridgeCmd())
	return cmd
}

func newImportMegatronCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "megatron-lm [--name NAME] [--encoder NAME] [--out FILE] -- ARGV...",
		Short: "A layout from the argv of Megatron-LM's MIMO example",
		Long: `Read the argv of a Megatron-LM MIMO launch (a torchrun line or
pretrain_mimo.py's arguments alone): torchrun's --nnodes and
--nproc-per-node give the cluster; the grid arguments, plain (--llm-tp,
before Megatron-LM PR #6894) or --mimo-* (since), not both, give the
modules, a missing one taking args.py's default; --tensor-parallel-num-
weight-shards and --expert-tensor-parallel-num-weight-shards give GTP,
--num-experts the language module's experts, --micro-batch-size and
--global-batch-size the batch. Plain names pin the layout's target_version
to the newest upstream that takes them.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 || len(args) == 0 {
				return usageErr("import megatron-lm takes the launch's argv after --")
			}
			return nil
		},
	}
	cmd.Flags().String("encoder", "vision", "the encoder module's name (the argv has only its sizes)")
	addImportFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v := config(cmd)
		l, err := importer.MegatronLM(args, v.GetString("encoder"))
		if err != nil {
			return usageErr("import megatron-lm: %v", err)
		}
		return writeImported(cmd, l)
	}
	return cmd
}

func newImportBridgeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bridge-env [--from-script FILE] [--name NAME] [--out FILE]",
		Short: "A layout from the MIMO_* variables of Megatron-Bridge's llava examples",
		Long: `Read MIMO_<MODULE>_TP, _PP, _DP and _OFFSET (LLM for the language module,
VISION, AUDIO, ... for the encoders, lower-cased into module names) from
the environment, or from the assignments of a shell script (--from-script:
export NAME=VALUE, or NAME=VALUE before a command; the script is read, never
run). Every module needs all four variables.`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().String("from-script", "", "read the variables from this shell script instead of the environment")
	addImportFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		v := config(cmd)
		env := map[string]string{}
		if path := v.GetString("from-script"); path != "" {
			f, err := os.Open(path)
			if err != nil {
				return usageErr("import bridge-env: %v", err)
			}
			defer f.Close()
			if env, err = importer.ScriptEnv(f); err != nil {
				return usageErr("import bridge-env: %s: %v", path, err)
			}
		} else {
			for _, kv := range os.Environ() {
				k, val, _ := strings.Cut(kv, "=")
				env[k] = val
			}
		}
		l, err := importer.BridgeEnv(env)
		if err != nil {
			return usageErr("import bridge-env: %v", err)
		}
		return writeImported(cmd, l)
	}
	return cmd
}

func addImportFlags(cmd *cobra.Command) {
	cmd.Flags().String("name", "", "the layout's name")
	cmd.Flags().String("out", "", "write the layout to this file, atomically (default: standard output)")
}

// writeImported checks the imported layout and writes it.
func writeImported(cmd *cobra.Command, l *importer.Layout) error {
	v := config(cmd)
	l.Name = v.GetString("name")
	text := l.YAML()
	out := v.GetString("out")
	file := "imported layout"
	if out != "" {
		file = out
	}
	ly, d := layout.Parse(file, []byte(text))
	res := validate.Check(ly, d)
	if !res.Valid(false) {
		if err := diag.WriteText(cmd.ErrOrStderr(), res.Diags); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "mimoplan: the launch describes an invalid layout:\n%s", text)
		return silentExit(exitInvalid)
	}
	if out == "" {
		_, err := io.WriteString(cmd.OutOrStdout(), text)
		return err
	}
	if err := launch.WriteFile(out, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	}); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "mimoplan: wrote the layout to %s\n", out)
	return nil
}
