package launch

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSplitArgs: the language module's uneven pipeline split reaches the
// Megatron-LM argv under upstream's flag names, and the Bridge export as
// the TransformerConfig fields of the same meaning. The layout and the
// account keys are written for a Megatron-LM before PR #5602: from it the
// MIMO example refuses them beside its --hybrid-layer-pattern
// (mimo-split-unsupported).
func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		name, keys   string
		version      string
		argv, bridge []string
	}{
		{"first-last", "pp: 4, decoder_first_pipeline_num_layers: 3, decoder_last_pipeline_num_layers: 3", "",
			[]string{"--decoder-first-pipeline-num-layers 3", "--decoder-last-pipeline-num-layers 3"},
			[]string{`"num_layers_in_first_pipeline_stage": 3`, `"num_layers_in_last_pipeline_stage": 3`}},
		// No virtual pipeline: both MIMO targets refuse one at pp above 1
		// (mimo-vpp-unsupported).
		{"account", "pp: 2, account_for_embedding_in_pipeline_split: true, account_for_loss_in_pipeline_split: true", "5375",
			[]string{"--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"},
			[]string{`"account_for_embedding_in_pipeline_split": True`, `"account_for_loss_in_pipeline_split": True`}},
		{"layout", `pp: 2, pipeline_model_parallel_layout: "Et*6|t*4L"`, "5375",
			[]string{"--pipeline-model-parallel-layout Et*6|t*4L"},
			[]string{`"pipeline_model_parallel_layout": "Et*6|t*4L"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			module := "  - {name: language, num_ranks: 8, " + tc.keys + ", model: {num_layers: 10, hidden_size: 1024, num_attention_heads: 8, seq_length: 2048, vocab_size: 32000}}\n"
			lm := "version: 1\ntarget: megatron-lm\ncluster: {nodes: 1, gpus_per_node: 8}\nbatch: {micro_batch_size: 1}\ntraining: {use_distributed_optimizer: true}\nmodules:\n" + module
			if tc.version != "" {
				lm = strings.Replace(lm, "target: megatron-lm\n", "target: megatron-lm\ntarget_version: \""+tc.version+"\"\n", 1)
			}
			p := build(t, lm, Options{LayoutArgs: true})
			got := strings.Join(p.Program, " ")
			for _, w := range tc.argv {
				assert.Contains(t, got, w)
			}
			br := strings.Replace(lm, "target_version: \""+tc.version+"\"\n", "", 1)
			br = strings.Replace(br, "megatron-lm", "megatron-bridge", 1)
			br = strings.Replace(br, "batch: {micro_batch_size: 1}", "batch: {micro_batch_size: 8, global_batch_size: 8}", 1)
			var b bytes.Buffer
			require.NoError(t, WriteBridge(&b, build(t, br, Options{Program: []string{"train.py"}})))
			for _, w := range tc.bridge {
				assert.Contains(t, b.String(), w)
			}
		})
	}
}

// TestFreezeArgs: frozen modules reach the Megatron-LM argv as the MIMO
// example's --freeze-lm / --freeze-vit and the Bridge export as
// MegatronMIMOProvider's freeze fields.
func TestFreezeArgs(t *testing.T) {
	lm := `version: 1
target: megatron-lm
cluster: {nodes: 1, gpus_per_node: 8}
batch: {micro_batch_size: 1}
modules:
  - {name: vision, num_ranks: 4, freeze: true}
  - {name: language, num_ranks: 4, freeze: true}
training: {use_distributed_optimizer: true}
`
	got := strings.Join(build(t, lm, Options{LayoutArgs: true}).Program, " ")
	assert.Contains(t, got, "--freeze-lm")
	assert.Contains(t, got, "--freeze-vit")
	unfrozen := strings.ReplaceAll(lm, ", freeze: true", "")
	got = strings.Join(build(t, unfrozen, Options{LayoutArgs: true}).Program, " ")
	assert.NotContains(t, got, "--freeze")

	br := strings.Replace(strings.Replace(lm, "megatron-lm", "megatron-bridge", 1), "{micro_batch_size: 1}", "{micro_batch_size: 4, global_batch_size: 8}", 1)
	var b bytes.Buffer
	require.NoError(t, WriteBridge(&b, build(t, br, Options{Program: []string{"train.py"}})))
	assert.Contains(t, b.String(), `"freeze_language_model": True`)
	assert.Contains(t, b.String(), `"freeze_modality_encoders": {"vision": True}`)
}
