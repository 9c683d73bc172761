package importcmd

import (
	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/exitcode"
)

func newCmdMegatron(f *cmdutil.Factory, run func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Source: "megatron-lm"}
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
				return exitcode.Usagef("import megatron-lm takes the launch's argv after --")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Argv = args
			return run(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Encoder, "encoder", "vision", "the encoder module's name (the argv has only its sizes)")
	bindCommon(cmd, opts)
	return cmd
}
