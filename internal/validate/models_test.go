package validate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func checkModel(t *testing.T, text string) *validate.Result {
	t.Helper()
	l, d := layout.Parse("m.yaml", []byte(text))
	return validate.Check(l, d)
}

func rulesOf(r *validate.Result) map[string][]string {
	out := map[string][]string{}
	for _, x := range r.Diags.Items {
		out[x.Module] = append(out[x.Module], x.Rule)
	}
	return out
}

// Every model rule of a module is reported even when another module (or
// the placement) has core errors.
func TestModelRulesBesideCoreErrors(t *testing.T) {
	r := checkModel(t, `version: 1
world_size: 16
modules:
  - name: vision
    num_ranks: 6
    tp: 8
    model: {preset: clip-vit-l-14-336, num_attention_heads: 12, hidden_size: 1536}
  - name: language
    num_ranks: 8
    tp: 8
    pp: 3
    model: {preset: llama3-8b, num_attention_heads: 36, hidden_size: 4608, kv_channels: 128}
`)
	got := rulesOf(r)
	assert.Contains(t, got["vision"], "dense-not-divisible")
	assert.Contains(t, got["vision"], "heads-not-divisible", "the model rules of a module with core errors")
	// pp 3 fails the expert grid too; dense-not-divisible says it once.
	assert.ElementsMatch(t, []string{"heads-not-divisible", "layers-not-divisible", "dense-not-divisible"}, got["language"])
	assert.Contains(t, got[""], "world-gap")
	assert.Empty(t, r.Estimates, "no estimate for modules with errors")
}

func TestEstimatesPerModule(t *testing.T) {
	r := checkModel(t, `version: 1
world_size: 18
batch: {micro_batch_size: 2, global_batch_size: 128}
training: {use_distributed_optimizer: true}
modules:
  - name: vision
    num_ranks: 2
    model: {preset: siglip-so400m-patch14-384}
  - name: language
    num_ranks: 16
    tp: 4
    pp: 2
    model: {preset: llama3-8b}
`)
	require.Empty(t, r.Diags.Items)
	require.Len(t, r.Estimates, 2)
	v, l := r.Estimates[0], r.Estimates[1]
	assert.Equal(t, "vision", v.Name)
	assert.Equal(t, 2, v.Parallel.DP)
	// Each step takes 2 samples on each of language's 2 lanes; vision
	// splits those 4 over its dp 2.
	assert.Equal(t, 2, l.Training.MicroBatchSize)
	assert.Equal(t, 2, v.Training.MicroBatchSize)
	assert.Equal(t, 32, l.Training.NumMicrobatches, "128 / (2 x dp 2)")
	assert.Equal(t, 32, v.Training.NumMicrobatches)
	assert.True(t, l.Training.UseDistributedOptimizer)
	assert.Greater(t, l.Estimate.TotalBytes(), v.Estimate.TotalBytes())
}

func TestGPUMemoryShortNamesFigures(t *testing.T) {
	r := checkModel(t, `version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu_memory: 40GiB}
modules:
  - name: language
    num_ranks: 8
    model: {preset: llama3-8b}
`)
	require.Len(t, r.Diags.Items, 1)
	x := r.Diags.Items[0]
	assert.Equal(t, "gpu-memory-short", x.Rule)
	assert.Equal(t, "language", x.Module)
	assert.Equal(t, 6, x.Line)
	assert.Contains(t, x.Message, "weights and optimizer")
	assert.Contains(t, x.Message, "cluster.gpu_memory (40.00 GiB, line 2)")
	assert.Contains(t, x.Hint, "tp 8")
}

func TestGPUMemoryShortColocatedAddUp(t *testing.T) {
	text := `version: 1
cluster: {nodes: 1, gpus_per_node: 8, gpu_memory: MEM}
modules:
  - name: vision
    num_ranks: 8
    rank_offset: 0
    tp: 2
    model: {preset: clip-vit-l-14-336}
  - name: language
    num_ranks: 8
    rank_offset: 0
    tp: 4
    model: {preset: qwen2.5-7b}
`
	r := checkModel(t, strings.ReplaceAll(text, "MEM", "80GiB"))
	require.Len(t, r.Estimates, 2)
	v, l := r.Estimates[0].Estimate.TotalBytes(), r.Estimates[1].Estimate.TotalBytes()
	shared := v + l - model.CUDAContextBytes
	// A limit between the larger module and the two together.
	limit := int64((l + shared) / 2)
	require.Greater(t, shared, l)
	r = checkModel(t, strings.ReplaceAll(text, "MEM", fmt.Sprintf("%dMiB", limit>>20)))
	require.Len(t, r.Diags.Items, 1, "%v", r.Diags.Items)
	x := r.Diags.Items[0]
	assert.Equal(t, "gpu-memory-short", x.Rule)
	assert.Contains(t, x.Message, "colocated modules share these GPUs")
	assert.Contains(t, x.Message, validate.GiB(shared))
	assert.Contains(t, x.Hint, "for language")
}

// vpp-needs-pp is Megatron's argument check (arguments.py:1002), which
// reads no model: a module without one is held to it too, and a module
// with one gets it once.
func TestVPPNeedsPPWithoutModel(t *testing.T) {
	const lm = "  model: {num_layers: 8, hidden_size: 256, num_attention_heads: 4, seq_length: 256, vocab_size: 1000}\n"
	vppNeedsPP := func(line, column int) at { return at{"vpp-needs-pp", line, column, "language"} }
	runRuleCases(t, []ruleCase{
		{"no model, pp 1, vpp 2", "version: 1\nworld_size: 2\nmodules:\n- {name: language, num_ranks: 2, pp: 1, vpp: 2}\n",
			[]at{vppNeedsPP(4, 46)}},
		{"no model, pp 1, vpp 1", "version: 1\nworld_size: 2\nmodules:\n- {name: language, num_ranks: 2, pp: 1, vpp: 1}\n", nil},
		{"no model, pp 2, vpp 2", "version: 1\nworld_size: 2\nmodules:\n- {name: language, num_ranks: 2, pp: 2, vpp: 2}\n", nil},
		{"a model, pp 1, vpp 2", "version: 1\nworld_size: 2\nmodules:\n- name: language\n  num_ranks: 2\n  pp: 1\n  vpp: 2\n" + lm,
			[]at{vppNeedsPP(7, 8)}},
	})
}
