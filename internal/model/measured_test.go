package model

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// measuredRun is one configuration of a scripts/measure-memory.sh results
// file (testdata/measured/*.json): the arguments, Megatron's figure computed
// on the device by theoretical_memory_usage.py, and what the GPU held.
type measuredRun struct {
	Arguments struct {
		NumLayers                       int     `json:"num_layers"`
		HiddenSize                      int     `json:"hidden_size"`
		FFNHiddenSize                   int     `json:"ffn_hidden_size"`
		NumAttentionHeads               int     `json:"num_attention_heads"`
		NumQueryGroups                  *int    `json:"num_query_groups"`
		KVChannels                      *int    `json:"kv_channels"`
		SeqLength                       int     `json:"seq_length"`
		VocabSize                       int     `json:"vocab_size"`
		MakeVocabSizeDivisibleBy        int     `json:"make_vocab_size_divisible_by"`
		Swiglu                          bool    `json:"swiglu"`
		Normalization                   string  `json:"normalization"`
		Untie                           bool    `json:"untie_embeddings_and_output_weights"`
		AddBiasLinear                   bool    `json:"add_bias_linear"`
		NumExperts                      *int    `json:"num_experts"`
		MoEFFNHiddenSize                *int    `json:"moe_ffn_hidden_size"`
		MoERouterTopK                   int     `json:"moe_router_topk"`
		MoELayerFreq                    int     `json:"moe_layer_freq"`
		MoESharedExpertIntermediateSize *int    `json:"moe_shared_expert_intermediate_size"`
		TP                              int     `json:"tensor_model_parallel_size"`
		PP                              int     `json:"pipeline_model_parallel_size"`
		EP                              int     `json:"expert_model_parallel_size"`
		SequenceParallel                bool    `json:"sequence_parallel"`
		UseDistributedOptimizer         bool    `json:"use_distributed_optimizer"`
		RecomputeGranularity            *string `json:"recompute_granularity"`
		MicroBatchSize                  int     `json:"micro_batch_size"`
		GlobalBatchSize                 int     `json:"global_batch_size"`
		WorldSize                       int     `json:"world_size"`
	} `json:"arguments"`
	Theory struct {
		WeightAndOptimizerBytes float64 `json:"weight_and_optimizer_bytes"`
		ActivationBytes         float64 `json:"activation_bytes"`
		ActivationFunction      string  `json:"activation_function"`
		PaddedVocabSize         int     `json:"padded_vocab_size"`
	} `json:"megatron_theory"`
	Ranks []struct {
		MaxAllocated float64 `json:"max_allocated"`
		MaxReserved  float64 `json:"max_reserved"`
		SMI          struct {
			ProcessUsedMiB float64 `json:"process_used_mib"`
		} `json:"smi_after_last_step"`
	} `json:"ranks"`
	Env struct {
		GPU            string `json:"gpu"`
		Torch          string `json:"torch"`
		MegatronCommit string `json:"megatron_commit"`
	} `json:"env"`
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func (r *measuredRun) inputs() (Config, Parallel, Training) {
	a := r.Arguments
	bias := a.AddBiasLinear
	c := Config{
		NumLayers: a.NumLayers, HiddenSize: a.HiddenSize, FFNHiddenSize: a.FFNHiddenSize,
		NumAttentionHeads: a.NumAttentionHeads, NumQueryGroups: deref(a.NumQueryGroups),
		KVChannels: deref(a.KVChannels), SeqLength: a.SeqLength, VocabSize: a.VocabSize,
		MakeVocabSizeDivisibleBy: a.MakeVocabSizeDivisibleBy, Swiglu: a.Swiglu,
		Normalization: a.Normalization, UntieEmbeddingsAndOutputWeights: a.Untie,
		AddBiasLinear: &bias, NumExperts: deref(a.NumExperts),
		MoEFFNHiddenSize: deref(a.MoEFFNHiddenSize), MoERouterTopK: a.MoERouterTopK,
		MoELayerFreq: a.MoELayerFreq, MoESharedExpertIntermediateSize: deref(a.MoESharedExpertIntermediateSize),
	}
	p := Parallel{NumRanks: a.WorldSize, TP: a.TP, PP: a.PP, EP: a.EP}.Resolve()
	tr := Training{
		UseDistributedOptimizer: a.UseDistributedOptimizer,
		SequenceParallel:        a.SequenceParallel && a.TP > 1,
		MicroBatchSize:          a.MicroBatchSize,
		NumMicrobatches:         a.GlobalBatchSize / (a.MicroBatchSize * p.DP),
	}
	if a.RecomputeGranularity != nil {
		tr.RecomputeGranularity = *a.RecomputeGranularity
	}
	return c, p, tr
}

// peak is the most loaded rank's figures.
func (r *measuredRun) peak() (allocated, reserved, smi float64) {
	for _, k := range r.Ranks {
		allocated, reserved = max(allocated, k.MaxAllocated), max(reserved, k.MaxReserved)
		smi = max(smi, k.SMI.ProcessUsedMiB*(1<<20))
	}
	return allocated, reserved, smi
}

func loadMeasured(t *testing.T) map[string]map[string]measuredRun {
	t.Helper()
	files, err := filepath.Glob("testdata/measured/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]map[string]measuredRun{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var doc struct {
			Configs map[string]measuredRun `json:"configs"`
		}
		require.NoError(t, json.Unmarshal(data, &doc), f)
		require.NotEmpty(t, doc.Configs, f)
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = doc.Configs
	}
	return out
}

// The Megatron figure mimoplan computes is the one Megatron's own file gave
// on the device for the same arguments.
func TestMeasuredRunsMegatronFigure(t *testing.T) {
	for gpu, runs := range loadMeasured(t) {
		for name, r := range runs {
			c, p, tr := r.inputs()
			m := Compute(c, p, tr).Megatron
			assert.Equal(t, r.Theory.PaddedVocabSize, m.PaddedVocabSize, "%s/%s", gpu, name)
			assert.Equal(t, r.Theory.ActivationFunction, m.ActivationFormula, "%s/%s", gpu, name)
			assert.LessOrEqual(t, relErr(m.WeightAndOptimizerBytes, r.Theory.WeightAndOptimizerBytes), exact, "%s/%s weights", gpu, name)
			assert.LessOrEqual(t, relErr(m.ActivationBytes, r.Theory.ActivationBytes), exact, "%s/%s activations", gpu, name)
		}
	}
}

// missesTenPercent lists the measured configurations whose estimate is not
// within 10% of the measurement, each for a reason docs/estimate.md gives
// (none of them an overhead that a constant or a fraction could carry).
var missesTenPercent = map[string]string{
	"dense-small":             "the local spec's unfused attention keeps the a*s*s scores, which the formula leaves out",
	"dense-medium-full":       "torch's foreach AdamW (no Apex or Transformer Engine) takes 4 bytes per parameter during the step",
	"gqa-swiglu-selective":    "torch's RMSNorm and unfused RoPE keep fp32 copies; SwiGLU's wider MLP input",
	"gqa-swiglu-full-distopt": "torch's foreach AdamW (no Apex or Transformer Engine) takes 4 bytes per parameter during the step",
	"moe-ep1":                 "the formula counts no MoE activations (topk copies of each token through the experts)",
}

// With the overhead terms, mimoplan's total is within 10% of nvidia-smi's
// used memory, and the total less the CUDA context within 10% of PyTorch's
// reserved memory, for every configuration but the documented misses.
func TestMeasuredRunsWithinTenPercent(t *testing.T) {
	var table []string
	for gpu, runs := range loadMeasured(t) {
		names := make([]string, 0, len(runs))
		for n := range runs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			r := runs[name]
			c, p, tr := r.inputs()
			e := Compute(c, p, tr)
			AddOverheads(&e)
			_, reserved, smi := r.peak()
			require.Positive(t, reserved, "%s/%s", gpu, name)
			require.Positive(t, smi, "%s/%s", gpu, name)
			vsReserved := (e.TotalBytes() - CUDAContextBytes) / reserved
			vsSMI := e.TotalBytes() / smi
			within := vsReserved >= 0.9 && vsReserved <= 1.1 && vsSMI >= 0.9 && vsSMI <= 1.1
			_, miss := missesTenPercent[name]
			assert.Equal(t, !miss, within, "%s/%s: estimate/reserved %.3f, estimate/nvidia-smi %.3f", gpu, name, vsReserved, vsSMI)
			terms, _ := json.Marshal(e.Terms)
			table = append(table, fmt.Sprintf("%s %s megatron=%.0f+%.0f mimoplan=%.0f+%.0f total=%.0f MiB: /reserved %.3f /smi %.3f terms=%s",
				gpu, name, e.Megatron.WeightAndOptimizerBytes/(1<<20), e.Megatron.ActivationBytes/(1<<20),
				e.WeightAndOptimizerBytes()/(1<<20), e.ActivationBytes()/(1<<20), e.TotalBytes()/(1<<20), vsReserved, vsSMI, terms))
		}
	}
	sort.Strings(table)
	t.Log("\n" + strings.Join(table, "\n"))
}
