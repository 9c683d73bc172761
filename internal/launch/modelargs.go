package launch

import (
	"sort"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/megatron"
	"github.com/mimoplan/mimoplan/internal/model"
)

// modelArgs are the language module's model as Megatron-LM arguments:
// the destinations internal/model resolves (model.MegatronArgs, what
// Megatron's own memory and FLOPs formulas read), so the job runs the
// model mimoplan checked. num_experts is left to the layout's
// --num-experts. nil for a layout without a language model.
func modelArgs(l *layout.Layout) []string {
	dest := modelDestinations(l)
	if dest == nil {
		return nil
	}
	args := []string{megatron.BF16}
	if _, ok := dest["num_query_groups"]; ok {
		args = append(args, megatron.GroupQueryAttention)
	}
	for _, f := range megatron.ModelFlags {
		v, ok := dest[f.Dest]
		if !ok {
			continue
		}
		s := value(v)
		switch {
		case f.On != "":
			if s == f.On {
				args = append(args, f.Flag)
			}
		case s == "" || s == "0" && f.Dest == "vocab_size":
		default:
			args = append(args, f.Flag, s)
		}
	}
	return args
}

// modelDestinations are the language model's Megatron-LM destinations
// with their values, as launch-plan writes them; nil without a model.
func modelDestinations(l *layout.Layout) map[string]any {
	var m *layout.Model
	for i := range l.Modules {
		if l.Modules[i].Name == grid.LanguageModule {
			m = l.Modules[i].Model
		}
	}
	if m == nil {
		return nil
	}
	dest := model.MegatronArgs(m.Config, model.Parallel{NumRanks: 1, TP: 1, PP: 1, DP: 1, EP: 1}, model.Training{}).Model
	// The router's settings, which the model rules read (moe-topk1-softmax)
	// but Megatron's memory and FLOPs formulas do not.
	if c := m.Config; c.NumExperts > 0 {
		if c.MoERouterPreSoftmax {
			dest["moe_router_pre_softmax"] = true
		}
		if c.MoERouterScoreFunction != "" {
			dest["moe_router_score_function"] = c.MoERouterScoreFunction
		}
	}
	return dest
}

// value writes a destination as Megatron's parser reads it; a per-layer
// moe_layer_freq is the Python list its moe_freq_type evaluates.
func value(v any) string {
	switch x := v.(type) {
	case int:
		return strconv.Itoa(x)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	case []int:
		s := make([]string, len(x))
		for i, n := range x {
			s[i] = strconv.Itoa(n)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	return ""
}

// modelDests lists the destinations MegatronArgs may give that no flag
// above carries, for the test that keeps the two in step.
func modelDests() []string {
	known := map[string]bool{"num_experts": true}
	for _, f := range megatron.ModelFlags {
		known[f.Dest] = true
	}
	var out []string
	for k := range model.MegatronArgs(model.Config{NumLayers: 1, HiddenSize: 64, NumAttentionHeads: 1, NumQueryGroups: 1, NumExperts: 2,
		MTPNumLayers: 1, MultiLatentAttention: true, QLoRARank: 1, MoESharedExpertIntermediateSize: 1, MoELatentSize: 1},
		model.Parallel{NumRanks: 1, TP: 1, PP: 1, DP: 1, EP: 1}, model.Training{}).Model {
		if !known[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
