package launch

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/megatron"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// writeBridgeTraining writes the layout's training block as the fields of
// Megatron-Bridge's configs (megatron.BridgeConfigs): every key, defaults
// included, since Bridge's own defaults are not always Megatron-LM's
// (DistributedDataParallelConfig.grad_reduce_in_fp32 is False there, while
// Megatron-LM reduces in fp32 under bf16; so is TransformerConfig's
// gradient_accumulation_fusion, which Megatron-LM turns on). Sequence
// parallelism, tp_comm_overlap, defer_embedding_wgrad_compute and the
// loss's fusion go to the language model alone, each module's as
// layout.ModuleTraining gives them (the estimate reads the same), and
// overlap_p2p_comm is each module's as Megatron-LM settles it
// (layout.OverlapP2PComm: off without a virtual pipeline), since Megatron-core's
// non-interleaved schedule raises on it (schedules.py:2181 at d98e8a6) and
// the TransformerConfig's own default is False. Nothing for a layout
// without a training block.
func writeBridgeTraining(w io.Writer, t *topo.Topology) {
	lt := t.Layout.Training
	if lt == nil {
		return
	}
	values := trainingValues(lt)
	fmt.Fprint(w, `

# The layout's training block as Megatron-Bridge's config fields: set
# ConfigContainer.ddp (DistributedDataParallelConfig) and .optimizer
# (OptimizerConfig) from DDP_CONFIG and OPTIMIZER_CONFIG, and each module's
# TransformerConfig from TRANSFORMER_CONFIG[module], as
# examples/megatron_mimo/llava set them.
import torch
from megatron.core.transformer.enums import AttnBackend

`)
	for _, cfg := range []string{"ddp", "optimizer"} {
		fmt.Fprintf(w, "%s_CONFIG = {\n", map[string]string{"ddp": "DDP", "optimizer": "OPTIMIZER"}[cfg])
		for _, c := range megatron.BridgeConfigs {
			if slices.Contains(c.Configs, cfg) {
				fmt.Fprintf(w, "    %q: %s,\n", c.Key, pythonValue(c.Key, values[c.Key]))
			}
		}
		fmt.Fprint(w, "}\n")
	}
	fmt.Fprint(w, "TRANSFORMER_CONFIG = {\n")
	for i, m := range t.Modules {
		fmt.Fprintf(w, "    %q: {\n", m.Name)
		mod := &t.Layout.Modules[i]
		own := trainingValues(t.Layout.ModuleTraining(mod))
		for _, c := range megatron.BridgeConfigs {
			if !slices.Contains(c.Configs, "transformer") {
				continue
			}
			v := own[c.Key]
			if c.Key == "overlap_p2p_comm" {
				v = strconv.FormatBool(t.Layout.OverlapP2PComm(mod, m.PP))
			}
			fmt.Fprintf(w, "        %q: %s,\n", c.Key, pythonValue(c.Key, v))
		}
		fmt.Fprint(w, "    },\n")
	}
	fmt.Fprint(w, "}\n")
}

// trainingValues are lt's keys as a layout writes them.
func trainingValues(lt *layout.Training) map[string]string {
	values := map[string]string{}
	for _, k := range layout.TrainingKeys() {
		values[k.Name] = k.Value(lt)
	}
	return values
}

// pythonValue writes a training key's layout value as Python: a bool, a
// number, None for "none", an AttnBackend member, a torch dtype, or a
// string.
func pythonValue(key, v string) string {
	if d, ok := torchDtypes[v]; ok && strings.HasSuffix(key, "_dtype") {
		return d
	}
	switch {
	case v == "true":
		return "True"
	case v == "false":
		return "False"
	case v == "none":
		return "None"
	case key == "attention_backend":
		return "AttnBackend." + v
	case strings.HasPrefix(v, "["):
		// A list key: a list of strings.
		var q []string
		for _, x := range strings.Split(strings.Trim(v, "[]"), ", ") {
			q = append(q, strconv.Quote(x))
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	if _, err := strconv.Atoi(v); err == nil && !floatKey(key) {
		return v
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil && floatKey(key) {
		// A float field as a Python float (1.0, not 1).
		if !strings.ContainsAny(v, ".e") {
			v += ".0"
		}
		return v
	}
	return strconv.Quote(v)
}

// floatKey reports whether a training key takes a fractional number.
func floatKey(key string) bool {
	for _, k := range layout.TrainingKeys() {
		if k.Name == key {
			return k.Kind == "float"
		}
	}
	return false
}

// torchDtypes are the optimizer dtypes as OptimizerConfig takes them:
// Megatron-LM's own map from its arguments (arguments.py:1077-1079 at
// d98e8a6), fp8 as torch.uint8.
var torchDtypes = map[string]string{
	"fp32": "torch.float32", "bf16": "torch.bfloat16", "fp16": "torch.float16", "fp8": "torch.uint8",
}
