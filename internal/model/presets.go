package model

import (
	"slices"
	"strings"
)

// Preset is a named model of the built-in catalogue. docs/models.md cites
// the source config of each; the values are that config's, in Megatron's
// argument names.
type Preset struct {
	Name    string
	Summary string
	Encoder bool // no vocabulary: seq_length is tokens (patches, frames) per sample
	Config  Config
}

var no = new(bool)

var yes = func() *bool { t := true; return &t }()

// llamaLike is the shape Llama, Qwen2 and Mixtral share: SwiGLU, RMSNorm,
// untied embeddings, no linear biases, group query attention.
func llamaLike(layers, hidden, ffn, heads, groups, vocab, seq int) Config {
	return Config{
		NumLayers: layers, HiddenSize: hidden, FFNHiddenSize: ffn, NumAttentionHeads: heads,
		NumQueryGroups: groups, KVChannels: hidden / heads, SeqLength: seq, VocabSize: vocab,
		Swiglu: true, Normalization: "RMSNorm", UntieEmbeddingsAndOutputWeights: true, AddBiasLinear: no,
	}
}

// vit is a pre-norm ViT/Whisper encoder: LayerNorm, GELU MLP, biases.
func vit(layers, hidden, ffn, heads, kv, seq int) Config {
	return Config{
		NumLayers: layers, HiddenSize: hidden, FFNHiddenSize: ffn, NumAttentionHeads: heads,
		KVChannels: kv, SeqLength: seq, Normalization: "LayerNorm", AddBiasLinear: yes,
	}
}

var presets = []Preset{
	{Name: "llama3-8b", Summary: "Meta Llama 3 8B", Config: llamaLike(32, 4096, 14336, 32, 8, 128256, 8192)},
	{Name: "llama3-70b", Summary: "Meta Llama 3 70B", Config: llamaLike(80, 8192, 28672, 64, 8, 128256, 8192)},
	{Name: "llama3.1-405b", Summary: "Meta Llama 3.1 405B", Config: llamaLike(126, 16384, 53248, 128, 8, 128256, 8192)},
	{Name: "qwen2.5-7b", Summary: "Qwen2.5 7B", Config: llamaLike(28, 3584, 18944, 28, 4, 152064, 4096)},
	{Name: "qwen2.5-72b", Summary: "Qwen2.5 72B", Config: llamaLike(80, 8192, 29568, 64, 8, 152064, 4096)},
	{Name: "mixtral-8x7b", Summary: "Mistral Mixtral 8x7B (MoE, 8 experts, top 2)", Config: func() Config {
		c := llamaLike(32, 4096, 14336, 32, 8, 32000, 4096)
		c.NumExperts, c.MoEFFNHiddenSize, c.MoERouterTopK = 8, 14336, 2
		return c
	}()},
	{Name: "deepseek-v3", Summary: "DeepSeek-V3 671B (MLA, 256 experts top 8, 1 shared, 3 dense layers, 1 MTP layer)", Config: func() Config {
		c := llamaLike(61, 7168, 18432, 128, 0, 129280, 4096)
		c.KVChannels = 128
		c.NumExperts, c.MoEFFNHiddenSize, c.MoERouterTopK = 256, 2048, 8
		c.MoESharedExpertIntermediateSize = 2048
		c.MoELayerPattern = append(make([]int, 3), slices.Repeat([]int{1}, 58)...)
		c.MTPNumLayers = 1
		c.MultiLatentAttention = true
		c.QLoRARank, c.KVLoRARank, c.QKHeadDim, c.QKPosEmbHeadDim, c.VHeadDim = 1536, 512, 128, 64, 128
		return c
	}()},
	{Name: "nemotron4-15b", Summary: "NVIDIA Nemotron-4 15B (squared ReLU, LayerNorm)", Config: Config{
		NumLayers: 32, HiddenSize: 6144, FFNHiddenSize: 24576, NumAttentionHeads: 48, NumQueryGroups: 8,
		KVChannels: 128, SeqLength: 4096, VocabSize: 256000, Normalization: "LayerNorm",
		UntieEmbeddingsAndOutputWeights: true, AddBiasLinear: no,
	}},
	{Name: "clip-vit-l-14-336", Summary: "OpenAI CLIP ViT-L/14 at 336 px (576 patches + 1 class token)", Encoder: true,
		Config: vit(24, 1024, 4096, 16, 64, 577)},
	{Name: "siglip-so400m-patch14-384", Summary: "Google SigLIP so400m/14 at 384 px (729 patches)", Encoder: true,
		Config: vit(27, 1152, 4304, 16, 72, 729)},
	{Name: "radio-vit-h", Summary: "NVIDIA RADIO ViT-H/16 at 512 px (1024 patches + 8 class tokens)", Encoder: true,
		Config: vit(32, 1280, 5120, 16, 80, 1032)},
	{Name: "whisper-large-v3-encoder", Summary: "OpenAI Whisper large-v3 encoder (30 s of audio: 1500 frames)", Encoder: true,
		Config: vit(32, 1280, 5120, 20, 64, 1500)},
}

// Presets returns the catalogue, in documentation order.
func Presets() []Preset {
	out := slices.Clone(presets)
	for i := range out {
		out[i].Config = out[i].Config.clone()
	}
	return out
}

// LookupPreset returns the preset with the given name (case-insensitive).
func LookupPreset(name string) (Preset, bool) {
	for _, p := range presets {
		if strings.EqualFold(p.Name, name) {
			p.Config = p.Config.clone()
			return p, true
		}
	}
	return Preset{}, false
}

// PresetNames lists the catalogue's names.
func PresetNames() []string {
	out := make([]string, len(presets))
	for i, p := range presets {
		out[i] = p.Name
	}
	return out
}

// clone copies the slice and pointer fields so that callers may change
// their copy.
func (c Config) clone() Config {
	c.MoELayerPattern = slices.Clone(c.MoELayerPattern)
	if c.AddBiasLinear != nil {
		b := *c.AddBiasLinear
		c.AddBiasLinear = &b
	}
	return c
}
