package importer

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/megatron"
)

// Setting is one key of an imported model or training block, its value
// as YAML text.
type Setting struct {
	Key, Value string
}

// model reads the language model's arguments back into the model keys of
// the layout, which are named as Megatron-LM's destinations. nil when the
// argv gives none. --num-query-groups counts only beside
// --group-query-attention, as in Megatron-LM (arguments.py).
func (a *args) model() ([]Setting, error) {
	var out []Setting
	for _, f := range megatron.ModelFlags {
		if f.On != "" {
			if a.flags[f.Flag] {
				out = append(out, Setting{f.Dest, f.On})
			}
			continue
		}
		s, ok := a.vals[f.Flag]
		if !ok || f.Dest == "num_query_groups" && !a.flags[megatron.GroupQueryAttention] {
			continue
		}
		v, err := modelValue(f, s)
		if err != nil {
			return nil, err
		}
		out = append(out, Setting{f.Dest, v})
	}
	return out, nil
}

// modelValue is one model argument as YAML: a whole number; the
// normalization's name; moe_layer_freq as a number or the Python list of
// 0s and 1s that --moe-layer-freq evaluates.
func modelValue(f megatron.ModelFlag, s string) (string, error) {
	switch f.Dest {
	case "normalization", "moe_router_score_function":
		return strconv.Quote(s), nil
	case "moe_layer_freq":
		if inner, ok := strings.CutPrefix(s, "["); ok {
			inner, ok = strings.CutSuffix(inner, "]")
			var xs []string
			for _, x := range strings.Split(inner, ",") {
				x = strings.TrimSpace(x)
				if !ok || x != "0" && x != "1" {
					return "", fmt.Errorf("%s %q: mimoplan reads a whole number or a list of 0s and 1s such as [0,1,1]", f.Flag, s)
				}
				xs = append(xs, x)
			}
			return "[" + strings.Join(xs, ", ") + "]", nil
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		if f.Dest == "moe_layer_freq" {
			return "", fmt.Errorf("%s %q: mimoplan reads a whole number or a list of 0s and 1s such as [0,1,1]", f.Flag, s)
		}
		return "", fmt.Errorf("%s %q is not a whole number", f.Flag, s)
	}
	return strconv.Itoa(n), nil
}

// training reads the training settings back into the layout's training
// keys (named as the destinations), as Megatron-LM's validate_args
// settles them: --recompute-activations is recompute_granularity
// selective whatever --recompute-granularity says; --grad-reduce-in-bf16
// wins over --accumulate-allreduce-grads-in-fp32; --main-grads-dtype bf16
// without --accumulate-allreduce-grads-in-fp32 leaves the reduction in
// bf16 (arguments.py:1215-1217 at d98e8a6), grad_reduce_in_fp32 false.
// nil when the argv sets none.
func (a *args) training() []Setting {
	var out []Setting
	bf16Grads := a.vals["--main-grads-dtype"] == "bf16" && !a.flags["--accumulate-allreduce-grads-in-fp32"]
	for _, f := range megatron.TrainingFlags {
		v, ok := "", false
		if f.On != "" {
			v, ok = f.On, a.flags[f.Flag]
		} else {
			v, ok = a.vals[f.Flag]
		}
		for _, al := range f.Aliases {
			if a.flags[al.Flag] && (!ok || al.Wins) {
				v, ok = al.Value, true
			}
		}
		if !ok && f.Key == "grad_reduce_in_fp32" && bf16Grads {
			v, ok = "false", true
		}
		if !ok {
			continue
		}
		if k, ok := trainingKey(f.Key); ok && k.Kind == "list" {
			// nargs "+": the words readArgs joined, as a YAML list.
			out = append(out, Setting{f.Key, layout.ListText(strings.Fields(v))})
			continue
		}
		if x, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(x, 0) && !math.IsNaN(x) {
			// A number stays one (a capacity factor), and the layout's
			// reader judges it.
		} else if v != "true" && v != "false" {
			v = strconv.Quote(v)
		}
		out = append(out, Setting{f.Key, v})
	}
	return out
}

// trainingKey is the layout's training key of that name.
func trainingKey(name string) (layout.TrainingKey, bool) {
	for _, k := range layout.TrainingKeys() {
		if k.Name == name {
			return k, true
		}
	}
	return layout.TrainingKey{}, false
}
