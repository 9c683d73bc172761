package launch

import (
	"bufio"
	"fmt"
	"strconv"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// splitArgs are the language module's virtual pipeline size and uneven
// pipeline split as Megatron-LM's arguments
// (megatron/training/arguments.py:3095-3116 at d98e8a6): what validate
// checked the split with, so the job builds the stages mimoplan costed.
func splitArgs(l *layout.Layout) []string {
	var m *layout.Module
	for i := range l.Modules {
		if l.Modules[i].Name == grid.LanguageModule {
			m = &l.Modules[i]
		}
	}
	if m == nil {
		return nil
	}
	var args []string
	if m.VPP > 1 {
		args = append(args, "--num-virtual-stages-per-pipeline-rank", strconv.Itoa(m.VPP))
	}
	s := m.Split
	if s.First > 0 {
		args = append(args, "--decoder-first-pipeline-num-layers", strconv.Itoa(s.First))
	}
	if s.Last > 0 {
		args = append(args, "--decoder-last-pipeline-num-layers", strconv.Itoa(s.Last))
	}
	if s.AccountEmbedding {
		args = append(args, "--account-for-embedding-in-pipeline-split")
	}
	if s.AccountLoss {
		args = append(args, "--account-for-loss-in-pipeline-split")
	}
	if s.Layout != "" {
		args = append(args, "--pipeline-model-parallel-layout", s.Layout)
	}
	return args
}

// writeBridgeSplits writes each module's pipeline split as the
// TransformerConfig fields Megatron-Bridge's model providers take
// (megatron/core/transformer/transformer_config.py:103-141 at d98e8a6;
// Bridge's recipes set them on cfg.model, e.g.
// src/megatron/bridge/recipes/llama/h100/llama3.py:1227 at 067f987): the
// MIMO parallelism config has no place for them.
func writeBridgeSplits(bw *bufio.Writer, l *layout.Layout) {
	first := true
	for i := range l.Modules {
		m := &l.Modules[i]
		if !m.Split.Uneven() && m.VPP <= 1 {
			continue
		}
		if first {
			fmt.Fprint(bw, `

# Each module's pipeline split, as fields of its model provider
# (TransformerConfig): set them on the provider that builds the module.
PIPELINE_SPLITS = {
`)
			first = false
		}
		fmt.Fprintf(bw, "    %q: {\n", m.Name)
		if m.VPP > 1 {
			fmt.Fprintf(bw, "        \"virtual_pipeline_model_parallel_size\": %d,\n", m.VPP)
		}
		s := m.Split
		if s.First > 0 {
			fmt.Fprintf(bw, "        \"num_layers_in_first_pipeline_stage\": %d,\n", s.First)
		}
		if s.Last > 0 {
			fmt.Fprintf(bw, "        \"num_layers_in_last_pipeline_stage\": %d,\n", s.Last)
		}
		if s.AccountEmbedding {
			fmt.Fprint(bw, "        \"account_for_embedding_in_pipeline_split\": True,\n")
		}
		if s.AccountLoss {
			fmt.Fprint(bw, "        \"account_for_loss_in_pipeline_split\": True,\n")
		}
		if s.Layout != "" {
			fmt.Fprintf(bw, "        \"pipeline_model_parallel_layout\": %q,\n", s.Layout)
		}
		fmt.Fprint(bw, "    },\n")
	}
	if !first {
		fmt.Fprint(bw, "}\n")
	}
}
