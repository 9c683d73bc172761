package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// recomputeTerm is the estimate's recompute_modules term, and whether it
// has one.
func recomputeTerm(e Estimate) (float64, bool) {
	for _, t := range e.Terms {
		if t.Name == TermRecomputeModules {
			return t.Bytes, true
		}
	}
	return 0, false
}

// Each submodule selective recompute can name keeps less than it would
// without recompute, and the estimate says so in one term; core attention
// alone (Megatron's default) and another granularity add none. The MLP's
// share is exact: a dense layer's MLP activations, 4+2 bytes per token
// and intermediate value with SwiGLU, over tp, times the layers a stage
// holds and the micro-batches in flight.
func TestRecomputeModulesTerm(t *testing.T) {
	mla := Config{NumLayers: 4, HiddenSize: 1024, NumAttentionHeads: 16, SeqLength: 2048, VocabSize: 32000,
		FFNHiddenSize: 4096, Swiglu: true, NumExperts: 8, MoERouterTopK: 2, MoEFFNHiddenSize: 1024,
		MoESharedExpertIntermediateSize: 1024, MoELayerFreq: 2, MultiLatentAttention: true,
		QLoRARank: 256, KVLoRARank: 128, QKHeadDim: 64, QKPosEmbHeadDim: 32, VHeadDim: 64}
	par := Parallel{NumRanks: 2, TP: 2, DP: 1, PP: 1, EP: 1, ExptTP: 1, CP: 1}
	base := Training{RecomputeGranularity: RecomputeSelective, SequenceParallel: true, NumMicrobatches: 1}
	for _, m := range recomputeModulesPriced {
		tr := base
		tr.RecomputeModules = []string{m}
		d, ok := recomputeTerm(Compute(mla, par, tr))
		if m == "core_attn" {
			assert.False(t, ok, "core_attn alone is Megatron's default selective recompute: no term")
			continue
		}
		if assert.True(t, ok, m) {
			assert.Negative(t, d, "%s recomputed keeps less", m)
		}
	}
	full := base
	full.RecomputeGranularity, full.RecomputeMethod, full.RecomputeNumLayers = RecomputeFull, RecomputeUniform, 1
	full.RecomputeModules = []string{"mlp"}
	_, ok := recomputeTerm(Compute(mla, par, full))
	assert.False(t, ok, "recompute_modules reads only under selective recompute")

	dense := Config{NumLayers: 4, HiddenSize: 1024, NumAttentionHeads: 16, SeqLength: 2048, VocabSize: 32000,
		FFNHiddenSize: 4096, Swiglu: true}
	tr := base
	tr.RecomputeModules = []string{"core_attn", "mlp"}
	d, ok := recomputeTerm(Compute(dense, par, tr))
	assert.True(t, ok)
	// The first stage holds pp = 1 micro-batch of 4 layers.
	assert.InDelta(t, -4*2048*4096*(4+2)/2.0, d, 1)
}

// recomputeModulesPriced are the modules recompute_modules takes
// (layout.RecomputeModuleNames) that a model config can price: moe_act is
// refused (recompute-module-unsupported).
var recomputeModulesPriced = []string{"core_attn", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"}
