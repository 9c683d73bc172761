package launch

import (
	"sort"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
)

// modelFlag is how Megatron-LM's parser takes one model destination
// (megatron/training/arguments.py, and the TransformerConfig fields its
// ArgumentGroupFactory turns into flags).
type modelFlag struct {
	dest, flag string
	// on is the value for which a flag without a value is passed ("" for
	// a flag that takes the value).
	on string
}

// modelFlags are in the order launch-plan writes them.
var modelFlags = []modelFlag{
	{"num_layers", "--num-layers", ""},
	{"hidden_size", "--hidden-size", ""},
	{"ffn_hidden_size", "--ffn-hidden-size", ""},
	{"num_attention_heads", "--num-attention-heads", ""},
	{"num_query_groups", "--num-query-groups", ""},
	{"kv_channels", "--kv-channels", ""},
	{"seq_length", "--seq-length", ""},
	{"vocab_size", "--vocab-size", ""},
	{"make_vocab_size_divisible_by", "--make-vocab-size-divisible-by", ""},
	{"swiglu", "--swiglu", "true"},
	{"normalization", "--normalization", ""},
	{"untie_embeddings_and_output_weights", "--untie-embeddings-and-output-weights", "true"},
	{"add_bias_linear", "--disable-bias-linear", "false"},
	{"attention_output_gate", "--attention-output-gate", "true"},
	{"moe_ffn_hidden_size", "--moe-ffn-hidden-size", ""},
	{"moe_router_topk", "--moe-router-topk", ""},
	{"moe_layer_freq", "--moe-layer-freq", ""},
	{"moe_shared_expert_intermediate_size", "--moe-shared-expert-intermediate-size", ""},
	{"moe_shared_expert_gate", "--moe-shared-expert-gate", "true"},
	{"moe_latent_size", "--moe-latent-size", ""},
	{"mtp_num_layers", "--mtp-num-layers", ""},
	{"multi_latent_attention", "--multi-latent-attention", "true"},
	{"q_lora_rank", "--q-lora-rank", ""},
	{"kv_lora_rank", "--kv-lora-rank", ""},
	{"qk_head_dim", "--qk-head-dim", ""},
	{"qk_pos_emb_head_dim", "--qk-pos-emb-head-dim", ""},
	{"v_head_dim", "--v-head-dim", ""},
}

// modelArgs are the language module's model as Megatron-LM arguments:
// the destinations internal/model resolves (model.MegatronArgs, what
// Megatron's own memory and FLOPs formulas read), so the job runs the
// model mimoplan checked. num_experts is left to the layout's
// --num-experts. nil for a layout without a language model.
func modelArgs(l *layout.Layout) []string {
	var m *layout.Model
	for i := range l.Modules {
		if l.Modules[i].Name == "language" {
			m = l.Modules[i].Model
		}
	}
	if m == nil {
		return nil
	}
	dest := model.MegatronArgs(m.Config, model.Parallel{NumRanks: 1, TP: 1, PP: 1, DP: 1, EP: 1}, model.Training{}).Model
	var args []string
	if _, ok := dest["num_query_groups"]; ok {
		args = append(args, "--group-query-attention")
	}
	for _, f := range modelFlags {
		v, ok := dest[f.dest]
		if !ok {
			continue
		}
		s := value(v)
		switch {
		case f.on != "":
			if s == f.on {
				args = append(args, f.flag)
			}
		case s == "" || s == "0" && f.dest == "vocab_size":
		default:
			args = append(args, f.flag, s)
		}
	}
	return args
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
	for _, f := range modelFlags {
		known[f.dest] = true
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
