package launch

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/megatron"
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
		args = append(args, megatron.VirtualStages, strconv.Itoa(m.VPP))
	}
	s := m.Split
	if s.First > 0 {
		args = append(args, megatron.DecoderFirst, strconv.Itoa(s.First))
	}
	if s.Last > 0 {
		args = append(args, megatron.DecoderLast, strconv.Itoa(s.Last))
	}
	if s.AccountEmbedding {
		args = append(args, megatron.AccountEmbedding)
	}
	if s.AccountLoss {
		args = append(args, megatron.AccountLoss)
	}
	if s.Layout != "" {
		args = append(args, megatron.PipelineLayout, s.Layout)
	}
	return args
}

// freezeArgs are the modules' freeze keys as the flags of Megatron-LM's
// MIMO example (examples/mimo/model_providers/nemotron_moe_vlm.py:65-66 at
// d98e8a6, read by examples/mimo/training/runtime.py:104 for the language
// model and :62 for the encoder's backbone: requires_grad_(False), so its
// DDP wrapper holds no gradient buffer and the optimizer no state).
func freezeArgs(l *layout.Layout) []string {
	var args []string
	for i := range l.Modules {
		m := &l.Modules[i]
		switch {
		case !m.Freeze:
		case m.Name == grid.LanguageModule:
			args = append(args, megatron.FreezeLanguage)
		default:
			args = append(args, megatron.FreezeEncoder)
		}
	}
	return args
}

// writeBridgeFreeze writes the modules' freeze keys as the fields of
// Megatron-Bridge's MegatronMIMOProvider
// (src/megatron/bridge/models/megatron_mimo/megatron_mimo_provider.py:154,
// :155 at 067f987), keyed by the layout's module names.
func writeBridgeFreeze(bw *bufio.Writer, l *layout.Layout) {
	lang := false
	var encs []string
	for i := range l.Modules {
		m := &l.Modules[i]
		switch {
		case !m.Freeze:
		case m.Name == grid.LanguageModule:
			lang = true
		default:
			encs = append(encs, fmt.Sprintf("%q: True", m.Name))
		}
	}
	if !lang && len(encs) == 0 {
		return
	}
	fmt.Fprintf(bw, `

# The frozen modules, as MegatronMIMOProvider's fields (its
# freeze_modality_encoders is keyed by modality: map the module names).
FREEZE = {
    "freeze_language_model": %s,
    "freeze_modality_encoders": {%s},
}
`, map[bool]string{true: "True", false: "False"}[lang], strings.Join(encs, ", "))
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
