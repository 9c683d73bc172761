package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// HFArchitectures lists what FromHFConfig reads: the architectures (or, for
// vision and audio configs, model types) of Hugging Face config.json files.
var HFArchitectures = []string{
	"LlamaForCausalLM", "Qwen2ForCausalLM", "MixtralForCausalLM", "Qwen2MoeForCausalLM",
	"DeepseekV3ForCausalLM", "CLIPVisionConfig", "SiglipVisionConfig", "WhisperConfig",
}

// hfKinds maps architectures and model_type values to the reader.
var hfKinds = map[string]string{
	"LlamaForCausalLM": "llama", "llama": "llama",
	"Qwen2ForCausalLM": "llama", "qwen2": "llama",
	"MistralForCausalLM": "llama", "mistral": "llama",
	"MixtralForCausalLM": "mixtral", "mixtral": "mixtral",
	"Qwen2MoeForCausalLM": "qwen2moe", "qwen2_moe": "qwen2moe",
	"DeepseekV3ForCausalLM": "deepseekv3", "deepseek_v3": "deepseekv3",
	"CLIPVisionConfig": "clip", "CLIPVisionModel": "clip", "CLIPModel": "clip", "clip": "clip", "clip_vision_model": "clip",
	"SiglipVisionConfig": "siglip", "SiglipVisionModel": "siglip", "SiglipModel": "siglip", "siglip": "siglip", "siglip_vision_model": "siglip",
	"WhisperConfig": "whisper", "WhisperForConditionalGeneration": "whisper", "WhisperModel": "whisper", "whisper": "whisper",
}

// HFError is a config.json that FromHFConfig cannot read.
type HFError struct{ Msg string }

func (e *HFError) Error() string { return e.Msg }

type hfConfig map[string]any

// FromHFConfig reads a Hugging Face config.json into Megatron's arguments,
// as Megatron-Bridge's model bridges map them (docs/models.md). encoder is
// true for a vision or audio encoder (no vocabulary). It returns an
// *HFError naming an unsupported architecture or a missing field.
func FromHFConfig(data []byte) (c Config, encoder bool, err error) {
	var raw hfConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return c, false, &HFError{"not a JSON object: " + strings.TrimPrefix(fmt.Sprint(err), "json: ")}
	}
	arch := ""
	if a, ok := raw["architectures"].([]any); ok && len(a) > 0 {
		arch, _ = a[0].(string)
	}
	mt, _ := raw["model_type"].(string)
	kind := hfKinds[arch]
	if kind == "" {
		kind = hfKinds[mt]
	}
	if kind == "" {
		name := arch
		if name == "" {
			name = mt
		}
		if name == "" {
			return c, false, &HFError{"config.json names no architecture or model_type; supported: " + strings.Join(HFArchitectures, ", ")}
		}
		return c, false, &HFError{fmt.Sprintf("unsupported architecture %q; supported: %s", name, strings.Join(HFArchitectures, ", "))}
	}
	r := &hfReader{cfg: raw}
	switch kind {
	case "clip", "siglip":
		if v, ok := raw["vision_config"].(map[string]any); ok { // a full CLIP/SigLIP config
			r.cfg = v
		}
		c = r.vision(kind == "clip")
		encoder = true
	case "whisper":
		c = r.whisper()
		encoder = true
	default:
		c = r.decoder(kind)
	}
	if r.err != nil {
		return Config{}, false, r.err
	}
	return c, encoder, nil
}

type hfReader struct {
	cfg hfConfig
	err *HFError
}

// int reads a required whole number.
func (r *hfReader) int(key string) int {
	v, ok := r.opt(key)
	if !ok && r.err == nil {
		r.err = &HFError{fmt.Sprintf("config.json has no %s", key)}
	}
	return v
}

// opt reads an optional whole number; absent or null is (0, false).
func (r *hfReader) opt(key string) (int, bool) {
	v, ok := r.cfg[key]
	if !ok || v == nil {
		return 0, false
	}
	n, isNum := v.(json.Number)
	f, err := n.Float64()
	if !isNum || err != nil || f != math.Trunc(f) || f < 0 || f > 1<<40 {
		if r.err == nil {
			r.err = &HFError{fmt.Sprintf("config.json %s must be a whole number, got %v", key, v)}
		}
		return 0, false
	}
	return int(f), true
}

func (r *hfReader) boolean(key string, def bool) bool {
	if b, ok := r.cfg[key].(bool); ok {
		return b
	}
	return def
}

func (r *hfReader) decoder(kind string) Config {
	c := Config{
		NumLayers:         r.int("num_hidden_layers"),
		HiddenSize:        r.int("hidden_size"),
		FFNHiddenSize:     r.int("intermediate_size"),
		NumAttentionHeads: r.int("num_attention_heads"),
		VocabSize:         r.int("vocab_size"),
		SeqLength:         r.int("max_position_embeddings"),
		Swiglu:            true,
		Normalization:     "RMSNorm",
		// These architectures default to untied embeddings.
		UntieEmbeddingsAndOutputWeights: !r.boolean("tie_word_embeddings", false),
		AddBiasLinear:                   new(bool),
	}
	if kv, ok := r.opt("num_key_value_heads"); ok {
		c.NumQueryGroups = kv
	}
	if hd, ok := r.opt("head_dim"); ok {
		c.KVChannels = hd
	}
	switch kind {
	case "mixtral":
		c.NumExperts = r.int("num_local_experts")
		c.MoERouterTopK = r.int("num_experts_per_tok")
		c.MoEFFNHiddenSize = c.FFNHiddenSize
	case "qwen2moe":
		c.NumExperts = r.int("num_experts")
		c.MoERouterTopK = r.int("num_experts_per_tok")
		c.MoEFFNHiddenSize = r.int("moe_intermediate_size")
		if s, ok := r.opt("shared_expert_intermediate_size"); ok && s > 0 {
			c.MoESharedExpertIntermediateSize = s
			c.MoESharedExpertGate = true
		}
		step, ok := r.opt("decoder_sparse_step")
		if !ok || step == 0 {
			step = 1
		}
		c.MoELayerPattern = make([]int, c.NumLayers)
		dense, _ := r.cfg["mlp_only_layers"].([]any)
		for i := range c.MoELayerPattern {
			if (i+1)%step == 0 && !slices.ContainsFunc(dense, func(v any) bool { return fmt.Sprint(v) == fmt.Sprint(i) }) {
				c.MoELayerPattern[i] = 1
			}
		}
	case "deepseekv3":
		c.NumQueryGroups = 0 // MLA: no group query attention
		c.KVChannels = 0
		c.MultiLatentAttention = true
		c.QLoRARank, _ = r.opt("q_lora_rank")
		c.KVLoRARank = r.int("kv_lora_rank")
		c.QKHeadDim = r.int("qk_nope_head_dim")
		c.QKPosEmbHeadDim = r.int("qk_rope_head_dim")
		c.VHeadDim = r.int("v_head_dim")
		c.NumExperts = r.int("n_routed_experts")
		c.MoERouterTopK = r.int("num_experts_per_tok")
		c.MoEFFNHiddenSize = r.int("moe_intermediate_size")
		if n, ok := r.opt("n_shared_experts"); ok {
			c.MoESharedExpertIntermediateSize = n * c.MoEFFNHiddenSize
		}
		first, _ := r.opt("first_k_dense_replace")
		c.MoELayerPattern = make([]int, c.NumLayers)
		for i := first; i < c.NumLayers; i++ {
			c.MoELayerPattern[i] = 1
		}
		c.MTPNumLayers, _ = r.opt("num_nextn_predict_layers")
	}
	return c
}

func (r *hfReader) vision(classToken bool) Config {
	c := vit(r.int("num_hidden_layers"), r.int("hidden_size"), r.int("intermediate_size"),
		r.int("num_attention_heads"), 0, 0)
	img, patch := r.int("image_size"), r.int("patch_size")
	if patch > 0 {
		side := img / patch
		c.SeqLength = side * side
		if classToken {
			c.SeqLength++
		}
	}
	return c
}

func (r *hfReader) whisper() Config {
	return vit(r.int("encoder_layers"), r.int("d_model"), r.int("encoder_ffn_dim"),
		r.int("encoder_attention_heads"), 0, r.int("max_source_positions"))
}
