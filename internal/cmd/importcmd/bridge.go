package importcmd

import (
	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
)

func newCmdBridge(f *cmdutil.Factory, run func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Source: "bridge-env"}
	cmd := &cobra.Command{
		Use:   "bridge-env [--from-script FILE] [--name NAME] [--out FILE]",
		Short: "A layout from the MIMO_* variables of Megatron-Bridge's llava examples",
		Long: `Read MIMO_<MODULE>_TP, _PP, _DP and _OFFSET (LLM for the language module,
VISION, AUDIO, ... for the encoders, lower-cased into module names) from
the environment, or from the assignments of a shell script (--from-script:
export NAME=VALUE, or NAME=VALUE before a command; the script is read, never
run). Every module needs all four variables.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return run(opts) },
	}
	cmd.Flags().StringVar(&opts.FromScript, "from-script", "", "read the variables from this shell script instead of the environment")
	bindCommon(cmd, opts)
	return cmd
}
