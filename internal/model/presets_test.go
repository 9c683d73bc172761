package model

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPresetsCatalogue(t *testing.T) {
	want := []string{"llama3-8b", "llama3-70b", "llama3.1-405b", "qwen2.5-7b", "qwen2.5-72b",
		"mixtral-8x7b", "deepseek-v3", "nemotron4-15b", "clip-vit-l-14-336",
		"siglip-so400m-patch14-384", "radio-vit-h", "whisper-large-v3-encoder"}
	assert.Equal(t, want, PresetNames())
	for _, p := range Presets() {
		c := p.Config.Resolve()
		assert.Equal(t, p.Encoder, c.VocabSize == 0, p.Name)
		assert.Positive(t, c.SeqLength, p.Name)
		if !c.MultiLatentAttention {
			assert.Zero(t, c.NumAttentionHeads%c.queryGroups(), p.Name)
		}
	}
	_, ok := LookupPreset("LLAMA3-8B")
	assert.True(t, ok)
	_, ok = LookupPreset("llama3-9b")
	assert.False(t, ok)
}

// Published parameter counts, as Megatron's formula counts them (it leaves
// out qkv biases, position embeddings, the CLIP pre-norm, MLA's q/kv norms
// aside): within 2% of the model cards.
func TestPresetParameterCounts(t *testing.T) {
	for _, c := range []struct {
		name string
		want float64
	}{
		{"llama3-8b", 8.03e9}, {"llama3-70b", 70.6e9}, {"llama3.1-405b", 405.9e9},
		{"qwen2.5-7b", 7.61e9}, {"qwen2.5-72b", 72.7e9}, {"mixtral-8x7b", 46.7e9},
		{"deepseek-v3", 671e9 + 14e9}, // 671B main model + 14B MTP module
		{"nemotron4-15b", 15.7e9}, {"clip-vit-l-14-336", 0.303e9},
		{"siglip-so400m-patch14-384", 0.428e9 - 0.016e9}, // without the attention-pooling head
		{"radio-vit-h", 0.63e9}, {"whisper-large-v3-encoder", 0.635e9},
	} {
		p, ok := LookupPreset(c.name)
		require.True(t, ok, c.name)
		e := Compute(p.Config, Parallel{NumRanks: 1}, Training{})
		assert.InEpsilon(t, c.want, e.Megatron.Parameters, 0.02, "%s: %.4g", c.name, e.Megatron.Parameters)
	}
	mx, _ := LookupPreset("mixtral-8x7b")
	assert.InEpsilon(t, 12.9e9, Compute(mx.Config, Parallel{NumRanks: 1}, Training{}).Megatron.ActiveParameters, 0.02)
	// 37B activated in the main model; Megatron counts the MTP module whole.
	ds, _ := LookupPreset("deepseek-v3")
	ds.Config.MTPNumLayers = 0
	assert.InEpsilon(t, 37e9, Compute(ds.Config, Parallel{NumRanks: 1}, Training{}).Megatron.ActiveParameters, 0.03)
}

func TestPresetsAreIndependentCopies(t *testing.T) {
	p, _ := LookupPreset("deepseek-v3")
	p.Config.MoELayerPattern[0] = 1
	*p.Config.AddBiasLinear = true
	q, _ := LookupPreset("deepseek-v3")
	assert.Equal(t, 0, q.Config.MoELayerPattern[0])
	assert.False(t, *q.Config.AddBiasLinear)
}

// A Hugging Face config.json gives the same model as the preset made from
// it (but for seq_length, which a config.json gives as the longest).
func TestHFConfigMatchesPresets(t *testing.T) {
	for file, preset := range map[string]string{
		"llama3-8b.json":                  "llama3-8b",
		"mixtral-8x7b.json":               "mixtral-8x7b",
		"deepseek-v3.json":                "deepseek-v3",
		"clip-vit-large-patch14-336.json": "clip-vit-l-14-336",
		"siglip-so400m-patch14-384.json":  "siglip-so400m-patch14-384",
		"whisper-large-v3.json":           "whisper-large-v3-encoder",
	} {
		data, err := os.ReadFile("testdata/hf/" + file)
		require.NoError(t, err)
		got, enc, err := FromHFConfig(data)
		require.NoError(t, err, file)
		p, _ := LookupPreset(preset)
		assert.Equal(t, p.Encoder, enc, file)
		got.SeqLength = p.Config.SeqLength
		a := Compute(got, Parallel{NumRanks: 8, TP: 2}, Training{})
		b := Compute(p.Config, Parallel{NumRanks: 8, TP: 2}, Training{})
		assert.Equal(t, b.Megatron, a.Megatron, file)
	}
}

func TestHFConfigQwenMoE(t *testing.T) {
	data, err := os.ReadFile("testdata/hf/qwen1.5-moe-a2.7b.json")
	require.NoError(t, err)
	c, enc, err := FromHFConfig(data)
	require.NoError(t, err)
	assert.False(t, enc)
	assert.Equal(t, 60, c.NumExperts)
	assert.Equal(t, 4, c.MoERouterTopK)
	assert.Equal(t, 5632, c.MoESharedExpertIntermediateSize)
	assert.True(t, c.MoESharedExpertGate)
	e := Compute(c, Parallel{NumRanks: 1}, Training{})
	assert.InEpsilon(t, 14.3e9, e.Megatron.Parameters, 0.02)
	assert.InEpsilon(t, 2.7e9, e.Megatron.ActiveParameters, 0.05)
}

func TestHFConfigErrors(t *testing.T) {
	gpt2, err := os.ReadFile("testdata/hf/gpt2.json")
	require.NoError(t, err)
	for _, c := range []struct{ in, want string }{
		{string(gpt2), `unsupported architecture "GPT2LMHeadModel"; supported: LlamaForCausalLM`},
		{`[1]`, "not a JSON object"},
		{`{}`, "names no architecture"},
		{`{"architectures":["LlamaForCausalLM"],"hidden_size":4096}`, "config.json has no num_hidden_layers"},
		{`{"model_type":"llama","num_hidden_layers":"32"}`, "num_hidden_layers must be a whole number"},
		{`{"model_type":"llama","num_hidden_layers":1.5}`, "num_hidden_layers must be a whole number"},
	} {
		_, _, err := FromHFConfig([]byte(c.in))
		require.Error(t, err, c.in)
		var he *HFError
		require.ErrorAs(t, err, &he)
		assert.Contains(t, err.Error(), c.want)
	}
}
