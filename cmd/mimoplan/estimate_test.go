package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

const estimateLayout = `version: 1
cluster: {nodes: 2, gpus_per_node: 8, gpu_memory: 80GiB}
batch: {micro_batch_size: 1, global_batch_size: 64}
training: {use_distributed_optimizer: true, sequence_parallel: true, recompute_granularity: selective}
modules:
  - name: vision
    num_ranks: 4
    tp: 2
    model: {preset: radio-vit-h}
  - name: language
    num_ranks: 8
    tp: 2
    pp: 2
    model: {preset: llama3-8b}
  - {name: audio, num_ranks: 4, tp: 2}
`

func TestEstimateJSON(t *testing.T) {
	code, out, errOut := mimoplan(t, "estimate", "--format", "json", writeLayout(t, estimateLayout))
	require.Equal(t, 0, code, errOut)
	var doc struct {
		Modules []map[string]json.RawMessage `json:"modules"`
		Not     []string                     `json:"not_estimated"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Len(t, doc.Modules, 2)
	assert.Equal(t, []string{"audio"}, doc.Not)
	for _, k := range []string{"name", "parameters", "active_parameters", "weight_and_optimizer_bytes",
		"activation_bytes", "total_bytes", "flops_per_sample", "megatron", "terms", "parallel", "training"} {
		assert.Contains(t, doc.Modules[1], k)
	}
	// The language module's Megatron figures are the model package's for
	// the module as the job: 8 ranks, tp 2, pp 2, dp 2, 32 microbatches.
	p, _ := model.LookupPreset("llama3-8b")
	want := model.Compute(p.Config, model.Parallel{NumRanks: 8, TP: 2, PP: 2, DP: 2},
		model.Training{UseDistributedOptimizer: true, SequenceParallel: true, RecomputeGranularity: "selective", MicroBatchSize: 1, NumMicrobatches: 32})
	var mg model.Megatron
	require.NoError(t, json.Unmarshal(doc.Modules[1]["megatron"], &mg))
	assert.Equal(t, want.Megatron, mg)
	var total int64
	require.NoError(t, json.Unmarshal(doc.Modules[1]["total_bytes"], &total))
	// Its total is model.Total's for the module's training (the layout's
	// target and the MIMO bridges validate counts).
	var tr model.Training
	require.NoError(t, json.Unmarshal(doc.Modules[1]["training"], &tr))
	assert.Equal(t, 2, tr.Communicators, "the bridges to the vision and audio modules")
	whole := model.Total(p.Config, model.Parallel{NumRanks: 8, TP: 2, PP: 2, DP: 2}, tr)
	assert.InDelta(t, whole.TotalBytes(), float64(total), 1)
}

func TestEstimateTableAndExitCodes(t *testing.T) {
	code, out, _ := mimoplan(t, "estimate", writeLayout(t, estimateLayout))
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "language")
	assert.Contains(t, out, "8.03B")
	assert.Contains(t, out, "compute_activation_memory")
	assert.Contains(t, out, "audio: not estimated")

	short := writeLayout(t, "version: 1\ncluster: {nodes: 1, gpus_per_node: 8, gpu_memory: 40GiB}\nmodules:\n- {name: language, num_ranks: 8, model: {preset: llama3-8b}}\n")
	code, out, errOut := mimoplan(t, "estimate", short)
	assert.Equal(t, 1, code, "gpu-memory-short is an error")
	assert.Contains(t, out, "language", "the figures are printed all the same")
	assert.Contains(t, errOut, "[gpu-memory-short]")

	code, _, errOut = mimoplan(t, "estimate", writeLayout(t, "version: 1\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 8, tp: 8, model: {preset: qwen2.5-7b}}\n"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "[heads-not-divisible]")

	code, _, errOut = mimoplan(t, "estimate", "--format", "yaml", short)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "format")
}

// --format html is one page, with the measured run beside the estimate;
// --measured wants html and a run the file has.
func TestEstimateHTML(t *testing.T) {
	root := testutil.RepoRoot()
	lay := filepath.Join(root, "testdata", "measured", "moe-ep2.yaml")
	runs := filepath.Join(root, "testdata", "measured", "h200-x2.json")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--format", "html", lay}, 0, `<section data-module="language"`},
		{[]string{"--format", "html", "--measured", runs, lay}, 0, `data-measured="11452547072"`},
		{[]string{"--format", "html", "--measured", runs, "--measured-run", "mimo-vit-gpt", lay}, 0, `data-measured="38675677184"`},
		{[]string{"--measured", runs, lay}, 2, "--measured is read by --format html only"},
		{[]string{"--format", "html", "--measured", runs, "--measured-run", "nope", lay}, 2, `no measured run named "nope"`},
		{[]string{"--format", "html", "--measured", filepath.Join(root, "no-such.json"), lay}, 2, "--measured"},
	} {
		code, out, errOut := mimoplan(t, append([]string{"estimate"}, tc.args...)...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, out+errOut, tc.want, "%v", tc.args)
		if tc.code == 0 {
			assert.True(t, strings.HasPrefix(out, "<!doctype html>"), "%v", tc.args)
		} else {
			assert.Empty(t, out, "%v: nothing printed on a usage error", tc.args)
		}
	}
}
