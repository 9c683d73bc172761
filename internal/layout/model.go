package layout

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/model"
)

// Model is a module's model: Megatron-LM's arguments, from a preset, a
// Hugging Face config.json, explicit keys, or explicit keys over either.
type Model struct {
	Config   model.Config
	Preset   string // the preset's name, when one was used
	HFConfig string // the config.json path as written, when one was used
	// Encoder is set for a model without vocabulary (a preset or
	// config.json of a vision or audio encoder, or no vocab_size given).
	Encoder bool

	pos map[string]diag.Pos
}

// Pos returns where a model key's value was set: the key itself, else the
// preset or hf_config it came from, else the model mapping.
func (m *Model) Pos(key string) diag.Pos {
	for _, k := range []string{key, "preset", "hf_config"} {
		if p, ok := m.pos[k]; ok {
			return p
		}
	}
	return m.pos[""]
}

// Given reports whether a model key was written in the layout.
func (m *Model) Given(key string) bool {
	_, ok := m.pos[key]
	return ok
}

// modelKey is one key of a module's model mapping.
type modelKey struct {
	name string
	read func(p *parser, f field, module string, c *model.Config) bool
}

// maxDim bounds every model dimension: far above any real model, far below
// any overflow of the products the estimate forms.
const maxDim = 1 << 24

func intKey(name string, lo int, hint string, set func(*model.Config, int)) modelKey {
	return modelKey{name, func(p *parser, f field, module string, c *model.Config) bool {
		v, ok := p.integer(f, "model."+name, module, lo, maxDim, hint)
		if ok {
			set(c, v)
		}
		return ok
	}}
}

func boolKey(name string, set func(*model.Config, bool)) modelKey {
	return modelKey{name, func(p *parser, f field, module string, c *model.Config) bool {
		v, ok := p.boolean(f, "model."+name, module)
		if ok {
			set(c, v)
		}
		return ok
	}}
}

func choiceKey(name string, choices []string, set func(*model.Config, string)) modelKey {
	return modelKey{name, func(p *parser, f field, module string, c *model.Config) bool {
		v := resolve(f.value)
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || !slices.Contains(choices, v.Value) {
			p.d.Add(diag.RuleInvalidValue, nodePos(v), module, didYouMean(v, choices, "one of "+strings.Join(choices, ", ")),
				"model.%s must be one of %s, got %s", name, strings.Join(choices, ", "), describe(v))
			return false
		}
		set(c, v.Value)
		return true
	}}
}

// modelKeys are the keys of a model mapping besides preset and hf_config,
// named as Megatron-LM's argument destinations.
var modelKeys = []modelKey{
	intKey("num_layers", 1, "transformer layers", func(c *model.Config, v int) { c.NumLayers = v }),
	intKey("hidden_size", 1, "the model width", func(c *model.Config, v int) { c.HiddenSize = v }),
	intKey("ffn_hidden_size", 1, "the MLP width; default 4*hidden_size", func(c *model.Config, v int) { c.FFNHiddenSize = v }),
	intKey("num_attention_heads", 1, "attention heads", func(c *model.Config, v int) { c.NumAttentionHeads = v }),
	intKey("num_query_groups", 1, "key/value heads (group query attention)", func(c *model.Config, v int) { c.NumQueryGroups = v }),
	intKey("kv_channels", 1, "the head dimension; default hidden_size / num_attention_heads", func(c *model.Config, v int) { c.KVChannels = v }),
	intKey("seq_length", 1, "tokens per sample (patches or frames for an encoder)", func(c *model.Config, v int) { c.SeqLength = v }),
	intKey("vocab_size", 0, "the tokenizer's vocabulary, before padding; 0 or absent for an encoder", func(c *model.Config, v int) { c.VocabSize = v }),
	intKey("make_vocab_size_divisible_by", 1, "default 128", func(c *model.Config, v int) { c.MakeVocabSizeDivisibleBy = v }),
	boolKey("swiglu", func(c *model.Config, v bool) { c.Swiglu = v }),
	choiceKey("normalization", []string{"LayerNorm", "RMSNorm"}, func(c *model.Config, v string) { c.Normalization = v }),
	boolKey("untie_embeddings_and_output_weights", func(c *model.Config, v bool) { c.UntieEmbeddingsAndOutputWeights = v }),
	boolKey("add_bias_linear", func(c *model.Config, v bool) { c.AddBiasLinear = &v }),
	boolKey("attention_output_gate", func(c *model.Config, v bool) { c.AttentionOutputGate = v }),
	intKey("num_experts", 1, "MoE experts; leave it out for a dense model", func(c *model.Config, v int) { c.NumExperts = v }),
	intKey("moe_ffn_hidden_size", 1, "each expert's MLP width; default ffn_hidden_size", func(c *model.Config, v int) { c.MoEFFNHiddenSize = v }),
	intKey("moe_router_topk", 1, "experts each token is routed to; default 2", func(c *model.Config, v int) { c.MoERouterTopK = v }),
	{"moe_layer_freq", (*parser).moeLayerFreq},
	intKey("moe_shared_expert_intermediate_size", 1, "the shared experts' total MLP width", func(c *model.Config, v int) { c.MoESharedExpertIntermediateSize = v }),
	boolKey("moe_shared_expert_gate", func(c *model.Config, v bool) { c.MoESharedExpertGate = v }),
	intKey("moe_latent_size", 1, "latent MoE width", func(c *model.Config, v int) { c.MoELatentSize = v }),
	boolKey("moe_router_pre_softmax", func(c *model.Config, v bool) { c.MoERouterPreSoftmax = v }),
	choiceKey("moe_router_score_function", []string{"softmax", "sigmoid"}, func(c *model.Config, v string) { c.MoERouterScoreFunction = v }),
	intKey("mtp_num_layers", 1, "multi-token prediction layers", func(c *model.Config, v int) { c.MTPNumLayers = v }),
	boolKey("multi_latent_attention", func(c *model.Config, v bool) { c.MultiLatentAttention = v }),
	intKey("q_lora_rank", 1, "MLA query low-rank dimension", func(c *model.Config, v int) { c.QLoRARank = v }),
	intKey("kv_lora_rank", 1, "MLA key/value low-rank dimension; default 32", func(c *model.Config, v int) { c.KVLoRARank = v }),
	intKey("qk_head_dim", 1, "MLA query/key head dimension; default 128", func(c *model.Config, v int) { c.QKHeadDim = v }),
	intKey("qk_pos_emb_head_dim", 1, "MLA rotary head dimension; default 64", func(c *model.Config, v int) { c.QKPosEmbHeadDim = v }),
	intKey("v_head_dim", 1, "MLA value head dimension; default 128", func(c *model.Config, v int) { c.VHeadDim = v }),
}

// ModelKeys lists the keys a model mapping accepts, in documentation order.
func ModelKeys() []string {
	out := []string{"preset", "hf_config"}
	for _, k := range modelKeys {
		out = append(out, k.name)
	}
	return out
}

// requiredModelKeys are Megatron's required model arguments (arguments.py
// validate_args: num_layers, hidden_size, num_attention_heads), and the
// sequence length the estimate needs.
var requiredModelKeys = []string{"num_layers", "hidden_size", "num_attention_heads", "seq_length"}

func (p *parser) model(m *Module, f field) {
	fs, ok := p.fields(f.value, "model", m.Name, ModelKeys())
	if !ok {
		m.Broken = true
		return
	}
	md := &Model{pos: map[string]diag.Pos{"": nodePos(resolve(f.value))}}
	for k, v := range fs {
		md.pos[k] = nodePos(resolve(v.value))
	}
	good := true
	_, hasPreset := fs["preset"]
	_, hasHF := fs["hf_config"]
	if hasPreset && hasHF {
		p.d.Add(diag.RuleInvalidValue, md.pos["hf_config"], m.Name, "keep one of the two; explicit keys beside it override single values",
			"model has both preset and hf_config")
		good = false
	} else if hasPreset {
		good = p.preset(md, fs["preset"], m.Name)
	} else if hasHF {
		good = p.hfConfig(md, fs["hf_config"], m.Name)
	} else {
		md.Encoder = true // until a vocab_size says otherwise
	}
	for _, k := range modelKeys {
		if v, ok := fs[k.name]; ok {
			good = k.read(p, v, m.Name, &md.Config) && good
		}
	}
	if md.Given("vocab_size") {
		md.Encoder = md.Config.VocabSize == 0
	}
	if !hasPreset && !hasHF {
		for _, k := range requiredModelKeys {
			if !md.Given(k) {
				p.d.Add(diag.RuleInvalidValue, md.pos[""], m.Name, fmt.Sprintf("add '%s: N', or start from 'preset: NAME' (%s)", k, strings.Join(model.PresetNames(), ", ")),
					"model.%s is required", k)
				good = false
			}
		}
	}
	if !good {
		m.Broken = true
		return
	}
	m.Model = md
}

func (p *parser) preset(md *Model, f field, module string) bool {
	v := resolve(f.value)
	hint := "presets: " + strings.Join(model.PresetNames(), ", ")
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		p.d.Add(diag.RuleInvalidValue, nodePos(v), module, hint, "model.preset must be a name, got %s", describe(v))
		return false
	}
	pr, ok := model.LookupPreset(v.Value)
	if !ok {
		if s := suggest(strings.ToLower(v.Value), model.PresetNames()); s != "" {
			hint = fmt.Sprintf("did you mean %q? (%s)", s, hint)
		}
		p.d.Add(diag.RuleInvalidValue, nodePos(v), module, hint, "unknown model preset %q", clip(v.Value))
		return false
	}
	md.Config, md.Preset, md.Encoder = pr.Config, pr.Name, pr.Encoder
	return true
}

// maxHFConfig bounds a config.json; real ones are a few kilobytes.
const maxHFConfig = 1 << 20

func (p *parser) hfConfig(md *Model, f field, module string) bool {
	v := resolve(f.value)
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Value == "" {
		p.d.Add(diag.RuleInvalidValue, nodePos(v), module, "the path of a Hugging Face config.json, relative to the layout", "model.hf_config must be a path, got %s", describe(v))
		return false
	}
	path := v.Value
	if !filepath.IsAbs(path) && p.l.File != "" {
		path = filepath.Join(filepath.Dir(p.l.File), path)
	}
	data, err := p.readFile(path, maxHFConfig)
	if err != nil {
		p.d.Add(diag.RuleInvalidValue, nodePos(v), module, "the path is relative to the layout file", "model.hf_config: %v", err)
		return false
	}
	c, enc, err := model.FromHFConfig(data)
	if err != nil {
		p.d.Add(diag.RuleInvalidValue, nodePos(v), module, "write the model's keys out instead, or use a preset", "model.hf_config %s: %v", clip(v.Value), err)
		return false
	}
	md.Config, md.HFConfig, md.Encoder = c, v.Value, enc
	return true
}

// moeLayerFreq reads moe_layer_freq: every how many layers one is MoE, or
// one 0/1 per layer.
func (p *parser) moeLayerFreq(f field, module string, c *model.Config) bool {
	v := resolve(f.value)
	if v.Kind != yaml.SequenceNode {
		n, ok := p.integer(f, "model.moe_layer_freq", module, 1, maxDim, "every how many layers one is MoE, or a list of one 0 or 1 per layer")
		c.MoELayerFreq, c.MoELayerPattern = n, nil // over a preset's list
		return ok
	}
	if len(v.Content) == 0 || len(v.Content) > maxDim {
		p.d.Add(diag.RuleInvalidValue, nodePos(v), module, "one 0 or 1 per layer", "model.moe_layer_freq must list one 0 or 1 per layer, got an empty list")
		return false
	}
	pat := make([]int, len(v.Content))
	for i, e := range v.Content {
		x, ok := p.integer(field{value: e}, fmt.Sprintf("model.moe_layer_freq[%d]", i), module, 0, 1, "1 for an MoE layer, 0 for a dense one")
		if !ok {
			return false
		}
		pat[i] = x
	}
	c.MoELayerPattern = pat
	return true
}

// moduleModel reads a module's vpp and model, and settles num_experts,
// which may be given on the module (the older place), in the model, or
// both when they agree.
func (p *parser) moduleModel(m *Module, fs map[string]field) {
	if f, ok := fs["vpp"]; ok {
		v, ok := p.integer(f, "vpp", m.Name, 1, maxDim, "virtual pipeline stages per pp rank (Megatron's --num-virtual-stages-per-pipeline-rank)")
		if ok {
			m.VPP = v
		} else {
			m.Broken, m.SizesUnread = true, true
		}
	}
	p.split(m, fs)
	f, ok := fs["model"]
	if !ok {
		return
	}
	p.model(m, f)
	md := m.Model
	if md == nil {
		return
	}
	switch mc := md.Config.NumExperts; {
	case m.NumExperts > 0 && mc > 0 && m.NumExperts != mc:
		p.d.Add(diag.RuleInvalidValue, m.Pos("num_experts"), m.Name, "give num_experts in one place (model.num_experts)",
			"num_experts %d disagrees with the model's num_experts %d (line %d)", m.NumExperts, mc, md.Pos("num_experts").Line)
		m.Broken = true
	case m.NumExperts == 0:
		m.NumExperts = mc
	default:
		md.Config.NumExperts = m.NumExperts
	}
}
