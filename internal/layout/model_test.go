package layout_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
)

const modelLayout = `version: 1
training:
  use_distributed_optimizer: true
  sequence_parallel: true
  recompute_granularity: selective
cluster: {nodes: 8, gpus_per_node: 8, gpu_memory: 80GiB}
modules:
  - name: language
    num_ranks: 64
    tp: 4
    pp: 4
    vpp: 2
    model:
      num_layers: 32
      hidden_size: 4096
      ffn_hidden_size: 14336
      num_attention_heads: 32
      num_query_groups: 8
      kv_channels: 128
      seq_length: 8192
      vocab_size: 128256
      make_vocab_size_divisible_by: 128
      swiglu: true
      normalization: RMSNorm
      untie_embeddings_and_output_weights: true
      add_bias_linear: false
      num_experts: 64
      moe_ffn_hidden_size: 2048
      moe_router_topk: 8
      moe_layer_freq: 1
      moe_shared_expert_intermediate_size: 4096
      mtp_num_layers: 1
`

func TestParseModel(t *testing.T) {
	l, d := layout.Parse("m.yaml", []byte(modelLayout))
	require.Empty(t, d.Items)
	require.NotNil(t, l.Training)
	assert.Equal(t, layout.Training{UseDistributedOptimizer: true, SequenceParallel: true, RecomputeGranularity: "selective"}, *l.Training)
	assert.Equal(t, int64(80<<30), l.GPUMemory)
	m := l.Modules[0]
	assert.Equal(t, 2, m.VPP)
	assert.Equal(t, 64, m.NumExperts, "model.num_experts is the module's")
	require.NotNil(t, m.Model)
	c := m.Model.Config
	assert.Equal(t, 32, c.NumLayers)
	assert.Equal(t, 8, c.NumQueryGroups)
	assert.Equal(t, "RMSNorm", c.Normalization)
	assert.False(t, *c.AddBiasLinear)
	assert.Equal(t, 1, c.MTPNumLayers)
	assert.False(t, m.Model.Encoder)
	assert.Equal(t, 14, m.Model.Pos("num_layers").Line)
	assert.Equal(t, 15, m.Model.Pos("hidden_size").Line)
	assert.Equal(t, 14, m.Model.Pos("preset").Line, "not given: the model mapping")
}

func TestParsePresetAndOverride(t *testing.T) {
	l, d := layout.Parse("p.yaml", []byte(`version: 1
world_size: 16
modules:
  - name: vision
    num_ranks: 8
    model: {preset: clip-vit-l-14-336}
  - name: language
    num_ranks: 8
    num_experts: 8
    model:
      preset: mixtral-8x7b
      seq_length: 2048
      moe_layer_freq: [1, 0]
`))
	require.Empty(t, d.Items)
	v, lang := l.Modules[0].Model, l.Modules[1].Model
	assert.True(t, v.Encoder)
	assert.Equal(t, "clip-vit-l-14-336", v.Preset)
	assert.Equal(t, 577, v.Config.SeqLength)
	assert.Equal(t, 2048, lang.Config.SeqLength, "explicit key over the preset")
	assert.Equal(t, 4096, lang.Config.HiddenSize, "from the preset")
	assert.Equal(t, []int{1, 0}, lang.Config.MoELayerPattern)
	assert.Equal(t, 11, lang.Pos("hidden_size").Line, "a preset's value points at the preset")
	assert.Equal(t, 12, lang.Pos("seq_length").Line)
}

func TestParseHFConfig(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../model/testdata/hf/llama3-8b.json")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "hf"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hf", "llama.json"), data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hf", "gpt2.json"), []byte(`{"architectures":["GPT2LMHeadModel"]}`), 0o644))
	text := []byte(`version: 1
world_size: 16
modules:
  - name: language
    num_ranks: 8
    model: {hf_config: hf/llama.json, seq_length: 4096}
  - name: vision
    num_ranks: 8
    model: {hf_config: hf/gpt2.json}
`)
	path := filepath.Join(dir, "l.yaml")
	require.NoError(t, os.WriteFile(path, text, 0o644))
	l, d, err := layout.Load(path)
	require.NoError(t, err)
	require.Len(t, d.Items, 1)
	x := d.Items[0]
	assert.Equal(t, found{"invalid-value", 9, 24}, found{x.Rule, x.Line, x.Column})
	assert.Contains(t, x.Message, `unsupported architecture "GPT2LMHeadModel"`)
	assert.Equal(t, "vision", x.Module)
	lang := l.Modules[0].Model
	require.NotNil(t, lang)
	assert.Equal(t, "hf/llama.json", lang.HFConfig)
	assert.Equal(t, 4096, lang.Config.SeqLength)
	p, _ := model.LookupPreset("llama3-8b")
	assert.Equal(t, p.Config.NumQueryGroups, lang.Config.NumQueryGroups)
	assert.True(t, l.Modules[1].Broken)
}

func TestParseModelErrors(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []found
		contains   string
	}{
		{"missing keys", "model: {hidden_size: 1024}", []found{{"invalid-value", 5, 12}, {"invalid-value", 5, 12}, {"invalid-value", 5, 12}}, "model.num_layers is required"},
		{"unknown preset", "model: {preset: llama3-8B-instruct}", []found{{"invalid-value", 5, 21}}, "unknown model preset"},
		{"near preset", "model: {preset: lama3-8b}", []found{{"invalid-value", 5, 21}}, `did you mean "llama3-8b"`},
		{"both", "model: {preset: llama3-8b, hf_config: x.json}", []found{{"invalid-value", 5, 43}}, "both preset and hf_config"},
		{"unknown key", "model: {preset: llama3-8b, hiden_size: 1}", []found{{"unknown-field", 5, 32}}, `did you mean "hidden_size"`},
		{"bad norm", "model: {preset: llama3-8b, normalization: rmsnorm}", []found{{"invalid-value", 5, 47}}, "LayerNorm, RMSNorm"},
		{"bad freq", "model: {preset: mixtral-8x7b, moe_layer_freq: [1, 2]}", []found{{"invalid-value", 5, 55}}, "moe_layer_freq[1] must be at most 1"},
		{"missing file", "model: {hf_config: nowhere.json}", []found{{"invalid-value", 5, 24}}, "cannot read"},
		{"experts disagree", "num_experts: 4\n    model: {preset: mixtral-8x7b}", []found{{"invalid-value", 5, 18}}, "disagrees with the model's num_experts 8"},
		{"vpp zero", "vpp: 0", []found{{"invalid-value", 5, 10}}, "vpp must be at least 1"},
		{"float dim", "model: {preset: llama3-8b, hidden_size: 4096.5}", []found{{"invalid-value", 5, 45}}, "model.hidden_size must be a whole number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, d := layout.Parse("e.yaml", []byte("version: 1\nworld_size: 8\nmodules:\n  - name: language\n    "+c.text+"\n    num_ranks: 8\n"))
			assert.Equal(t, c.want, diags(d))
			require.NotEmpty(t, d.Items)
			assert.Contains(t, d.Items[0].Message+" "+d.Items[0].Hint, c.contains)
		})
	}
}

func TestParseTrainingAndMemoryErrors(t *testing.T) {
	for _, c := range []struct{ text, contains string }{
		{"training: {recompute_granularity: partial}", "must be none, selective or full"},
		{"training: {sequence_parallel: yes}", "must be true or false"},
		{"training: {sequence_paralel: true}", `did you mean "sequence_parallel"`},
		{"cluster: {nodes: 1, gpus_per_node: 8, gpu_memory: 80}", "add the unit: 80GiB"},
		{"cluster: {nodes: 1, gpus_per_node: 8, gpu_memory: 80 gb}", "must be a size"},
		{"cluster: {nodes: 1, gpus_per_node: 8, gpu_memory: 0.5MiB}", "between 1MiB and 64TiB"},
	} {
		_, d := layout.Parse("t.yaml", []byte("version: 1\nworld_size: 8\n"+c.text+"\nmodules:\n  - {name: language, num_ranks: 8}\n"))
		require.NotEmpty(t, d.Items, c.text)
		assert.Equal(t, 3, d.Items[0].Line, c.text)
		assert.Contains(t, d.Items[0].Message+" "+d.Items[0].Hint, c.contains, c.text)
	}
	for text, want := range map[string]int64{"141GB": 141e9, "79.5 GiB": int64(79.5 * (1 << 30)), "81559MiB": 81559 << 20} {
		l, d := layout.Parse("t.yaml", []byte("version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu_memory: "+text+"}\nmodules:\n  - {name: language, num_ranks: 8}\n"))
		require.Empty(t, d.Items, text)
		assert.Equal(t, want, l.GPUMemory, text)
	}
}
