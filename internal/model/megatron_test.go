package model

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// fixture is one case of testdata/megatron.json, written by
// scripts/gen-model-fixtures.py from Megatron-LM's own functions.
type fixture struct {
	Name  string `json:"name"`
	Model struct {
		NumLayers                       int             `json:"num_layers"`
		HiddenSize                      int             `json:"hidden_size"`
		FFNHiddenSize                   int             `json:"ffn_hidden_size"`
		NumAttentionHeads               int             `json:"num_attention_heads"`
		NumQueryGroups                  int             `json:"num_query_groups"`
		KVChannels                      int             `json:"kv_channels"`
		SeqLength                       int             `json:"seq_length"`
		VocabSize                       int             `json:"vocab_size"`
		MakeVocabSizeDivisibleBy        int             `json:"make_vocab_size_divisible_by"`
		Swiglu                          bool            `json:"swiglu"`
		Normalization                   string          `json:"normalization"`
		Untie                           bool            `json:"untie_embeddings_and_output_weights"`
		AddBiasLinear                   *bool           `json:"add_bias_linear"`
		AttentionOutputGate             bool            `json:"attention_output_gate"`
		NumExperts                      int             `json:"num_experts"`
		MoEFFNHiddenSize                int             `json:"moe_ffn_hidden_size"`
		MoERouterTopK                   int             `json:"moe_router_topk"`
		MoELayerFreq                    json.RawMessage `json:"moe_layer_freq"`
		MoESharedExpertIntermediateSize int             `json:"moe_shared_expert_intermediate_size"`
		MoESharedExpertGate             bool            `json:"moe_shared_expert_gate"`
		MoELatentSize                   int             `json:"moe_latent_size"`
		MTPNumLayers                    int             `json:"mtp_num_layers"`
		MultiLatentAttention            bool            `json:"multi_latent_attention"`
		QLoRARank                       int             `json:"q_lora_rank"`
		KVLoRARank                      int             `json:"kv_lora_rank"`
		QKHeadDim                       int             `json:"qk_head_dim"`
		QKPosEmbHeadDim                 int             `json:"qk_pos_emb_head_dim"`
		VHeadDim                        int             `json:"v_head_dim"`
	} `json:"model"`
	Parallel struct {
		WorldSize int `json:"world_size"`
		TP        int `json:"tensor_model_parallel_size"`
		PP        int `json:"pipeline_model_parallel_size"`
		VPP       int `json:"virtual_pipeline_model_parallel_size"`
		DP        int `json:"data_parallel_size"`
		EP        int `json:"expert_model_parallel_size"`
		ExptTP    int `json:"expert_tensor_parallel_size"`
	} `json:"parallel"`
	Training struct {
		UseDistributedOptimizer bool    `json:"use_distributed_optimizer"`
		SequenceParallel        bool    `json:"sequence_parallel"`
		RecomputeGranularity    *string `json:"recompute_granularity"`
		MicroBatchSize          int     `json:"micro_batch_size"`
		NumMicrobatches         int     `json:"num_microbatches"`
	} `json:"training"`
	Expect struct {
		PaddedVocabSize         int     `json:"padded_vocab_size"`
		Parameters              float64 `json:"parameters"`
		ActiveParameters        float64 `json:"active_parameters"`
		ShardParameters         float64 `json:"shard_parameters"`
		WeightAndOptimizerBytes float64 `json:"weight_and_optimizer_bytes"`
		ActivationBytes         float64 `json:"activation_bytes"`
		TotalBytes              float64 `json:"total_bytes"`
		ActivationFormula       string  `json:"activation_formula"`
		FLOPsPerSample          float64 `json:"flops_per_sample"`
	} `json:"expect"`
}

func (f *fixture) inputs(t *testing.T) (Config, Parallel, Training) {
	m := f.Model
	c := Config{
		NumLayers: m.NumLayers, HiddenSize: m.HiddenSize, FFNHiddenSize: m.FFNHiddenSize,
		NumAttentionHeads: m.NumAttentionHeads, NumQueryGroups: m.NumQueryGroups,
		KVChannels: m.KVChannels, SeqLength: m.SeqLength, VocabSize: m.VocabSize,
		MakeVocabSizeDivisibleBy: m.MakeVocabSizeDivisibleBy, Swiglu: m.Swiglu,
		Normalization: m.Normalization, UntieEmbeddingsAndOutputWeights: m.Untie,
		AddBiasLinear: m.AddBiasLinear, AttentionOutputGate: m.AttentionOutputGate,
		NumExperts: m.NumExperts, MoEFFNHiddenSize: m.MoEFFNHiddenSize, MoERouterTopK: m.MoERouterTopK,
		MoESharedExpertIntermediateSize: m.MoESharedExpertIntermediateSize,
		MoESharedExpertGate:             m.MoESharedExpertGate, MoELatentSize: m.MoELatentSize,
		MTPNumLayers: m.MTPNumLayers, MultiLatentAttention: m.MultiLatentAttention,
		QLoRARank: m.QLoRARank, KVLoRARank: m.KVLoRARank, QKHeadDim: m.QKHeadDim,
		QKPosEmbHeadDim: m.QKPosEmbHeadDim, VHeadDim: m.VHeadDim,
	}
	if len(m.MoELayerFreq) > 0 {
		if m.MoELayerFreq[0] == '[' {
			require.NoError(t, json.Unmarshal(m.MoELayerFreq, &c.MoELayerPattern))
		} else {
			require.NoError(t, json.Unmarshal(m.MoELayerFreq, &c.MoELayerFreq))
		}
	}
	p := f.Parallel
	par := Parallel{NumRanks: p.WorldSize, TP: p.TP, PP: p.PP, VPP: p.VPP, DP: p.DP, EP: p.EP, ExptTP: p.ExptTP}
	tr := Training{
		UseDistributedOptimizer: f.Training.UseDistributedOptimizer,
		SequenceParallel:        f.Training.SequenceParallel,
		MicroBatchSize:          f.Training.MicroBatchSize,
		NumMicrobatches:         f.Training.NumMicrobatches,
	}
	if g := f.Training.RecomputeGranularity; g != nil {
		tr.RecomputeGranularity = *g
	}
	return c, par, tr
}

func loadFixtures(t *testing.T, path string) []fixture {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc struct {
		Commit string    `json:"megatron_lm_commit"`
		Cases  []fixture `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Len(t, doc.Commit, 40, "fixtures name the Megatron-LM commit they ran")
	require.NotEmpty(t, doc.Cases)
	return doc.Cases
}

// relErr is |got-want| relative to want (absolute when want is 0).
func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// exact is the tolerance the Go port keeps: float64 rounding of a
// different order of exact integer products, far inside the 0.5%.
const exact = 1e-12

func TestMatchesMegatron(t *testing.T) {
	cases := loadFixtures(t, "testdata/megatron.json")
	worst := map[string]float64{}
	for _, f := range cases {
		t.Run(f.Name, func(t *testing.T) {
			c, p, tr := f.inputs(t)
			e := Compute(c, p, tr)
			m, w := e.Megatron, f.Expect
			require.Equal(t, w.PaddedVocabSize, m.PaddedVocabSize, "padded vocab")
			require.Equal(t, w.ActivationFormula, m.ActivationFormula, "activation formula")
			for _, v := range []struct {
				name      string
				got, want float64
			}{
				{"parameters", m.Parameters, w.Parameters},
				{"active_parameters", m.ActiveParameters, w.ActiveParameters},
				{"shard_parameters", m.ShardParameters, w.ShardParameters},
				{"weight_and_optimizer_bytes", m.WeightAndOptimizerBytes, w.WeightAndOptimizerBytes},
				{"activation_bytes", m.ActivationBytes, w.ActivationBytes},
				{"total_bytes", m.TotalBytes(), w.TotalBytes},
				{"flops_per_sample", m.FLOPsPerSample, w.FLOPsPerSample},
			} {
				r := relErr(v.got, v.want)
				worst[v.name] = max(worst[v.name], r)
				require.LessOrEqualf(t, r, exact, "%s: got %v, Megatron %v", v.name, v.got, v.want)
			}
		})
	}
	t.Logf("%d cases; worst relative difference per figure: %v", len(cases), worst)
}
