package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPaddedVocabSize(t *testing.T) {
	for _, c := range []struct{ vocab, by, tp, want int }{
		{50257, 128, 1, 50304},
		{50257, 128, 8, 51200},
		{128256, 128, 4, 128512},
		{128000, 128, 1, 128000},
		{0, 128, 4, 0}, // an encoder
	} {
		assert.Equal(t, c.want, PaddedVocabSize(c.vocab, c.by, c.tp), "%+v", c)
	}
}

// Megatron's defaults (megatron/training/arguments.py validate_args and
// TransformerConfig) for what a layout leaves out.
func TestResolveDefaults(t *testing.T) {
	c := Config{NumLayers: 2, HiddenSize: 4096, NumAttentionHeads: 32}.Resolve()
	assert.Equal(t, 16384, c.FFNHiddenSize)
	assert.Equal(t, 128, c.KVChannels)
	assert.Equal(t, 128, c.MakeVocabSizeDivisibleBy)
	assert.Equal(t, "LayerNorm", c.Normalization)
	assert.True(t, *c.AddBiasLinear)
	assert.Equal(t, 2, c.MoERouterTopK)

	s := Config{HiddenSize: 4096, NumAttentionHeads: 32, Swiglu: true, NumExperts: 8}.Resolve()
	assert.Equal(t, 10880, s.FFNHiddenSize) // int((4*4096*2/3)/64)*64
	assert.Equal(t, 10880, s.MoEFFNHiddenSize)

	p := Parallel{NumRanks: 64, TP: 4, PP: 2}.Resolve()
	assert.Equal(t, 8, p.DP)
	assert.Equal(t, 4, p.ExptTP)
	assert.Equal(t, 1, p.EP)
}

func llama() Config {
	f := false
	return Config{NumLayers: 32, HiddenSize: 4096, FFNHiddenSize: 14336, NumAttentionHeads: 32,
		NumQueryGroups: 8, SeqLength: 8192, VocabSize: 128256, Swiglu: true,
		Normalization: "RMSNorm", UntieEmbeddingsAndOutputWeights: true, AddBiasLinear: &f}
}

// gpt is a model of the formula's own shape (heads as query groups, a 4h
// GeLU MLP), trained as the formula assumes (fp32 gradient reduction).
func gpt() (Config, Training) {
	return Config{NumLayers: 24, HiddenSize: 2048, NumAttentionHeads: 16, SeqLength: 2048, VocabSize: 50257},
		Training{}
}

func TestNoTermsWhenMegatronKnowsEverything(t *testing.T) {
	c, tr := gpt()
	tr.SequenceParallel, tr.RecomputeGranularity = true, RecomputeSelective
	e := Compute(c, Parallel{NumRanks: 64, TP: 4, PP: 2}, tr)
	assert.Empty(t, e.Terms)
	assert.Equal(t, e.Megatron.TotalBytes(), e.TotalBytes())
	assert.Equal(t, FormulaSP, e.Megatron.ActivationFormula)
}

func TestContextParallelSplitsActivations(t *testing.T) {
	c, tr := gpt()
	base := Compute(c, Parallel{NumRanks: 64, TP: 4, PP: 2}, tr)
	e := Compute(c, Parallel{NumRanks: 64, TP: 4, PP: 2, CP: 4}, tr)
	// Megatron's figure ignores cp; mimoplan's is a quarter of it.
	assert.Equal(t, base.Megatron.ActivationBytes, e.Megatron.ActivationBytes)
	assert.InDelta(t, base.Megatron.ActivationBytes/4, e.ActivationBytes(), 1)
	require.Len(t, e.Terms, 1)
	assert.Equal(t, TermContextSplit, e.Terms[0].Name)
}

func TestDistributedOptimizerShardsOverCP(t *testing.T) {
	_, tr := gpt()
	tr.UseDistributedOptimizer = true
	e := Compute(llama(), Parallel{NumRanks: 64, TP: 4, CP: 2}, tr)
	// dp = 8; Megatron's formula shards the 12 optimizer bytes over 8, the
	// real optimizer over dp x cp = 16.
	w := e.Megatron.ShardParameters
	assert.InDelta(t, w*(6+12.0/8), e.Megatron.WeightAndOptimizerBytes, 1)
	assert.InDelta(t, w*(6+12.0/16), e.WeightAndOptimizerBytes(), 1)
}

func TestFullRecomputeKeepsLayerInputs(t *testing.T) {
	c, none := gpt()
	tr := none
	tr.RecomputeGranularity = RecomputeFull
	e := Compute(c, Parallel{NumRanks: 8, TP: 8, PP: 1}, tr)
	full := Compute(c, Parallel{NumRanks: 8, TP: 8, PP: 1}, none)
	// Megatron's report ignores full recompute: the same figure as none.
	assert.Equal(t, full.Megatron.ActivationBytes, e.Megatron.ActivationBytes)
	require.Len(t, e.Terms, 1)
	assert.Equal(t, TermFullRecompute, e.Terms[0].Name)
	// Each layer's input, and one layer's activations while it is recomputed.
	assert.Less(t, e.ActivationBytes(), e.Megatron.ActivationBytes/3)
	assert.Greater(t, e.ActivationBytes(), 0.0)
}

func TestEncoderHasNoOutputLayer(t *testing.T) {
	vit := Config{NumLayers: 24, HiddenSize: 1024, NumAttentionHeads: 16, SeqLength: 577}
	_, tr := gpt()
	e := Compute(vit, Parallel{NumRanks: 8, TP: 2}, tr)
	assert.Zero(t, e.Megatron.PaddedVocabSize)
	require.Len(t, e.Terms, 1)
	assert.Equal(t, TermNoOutputLayer, e.Terms[0].Name)
	assert.Less(t, e.Terms[0].Bytes, 0.0)
	// 24 layers of 1024 hidden with 4x MLP, layer norms with bias.
	assert.Equal(t, 24*(4*1024*1024+2*1024*4096+2*2*1024)+2*1024, int(e.Megatron.Parameters))
}

func TestGTPRematShardsWeights(t *testing.T) {
	plain := Compute(llama(), Parallel{NumRanks: 64, TP: 4, PP: 2}, Training{})
	e := Compute(llama(), Parallel{NumRanks: 64, TP: 4, PP: 2, GTPRemat: 2}, Training{})
	assert.Less(t, e.WeightAndOptimizerBytes(), plain.WeightAndOptimizerBytes())
	assert.Greater(t, e.WeightAndOptimizerBytes(), plain.WeightAndOptimizerBytes()/2)
}

func TestAddedTermsCount(t *testing.T) {
	c, tr := gpt()
	e := Compute(c, Parallel{NumRanks: 8, TP: 8}, tr)
	before := e.TotalBytes()
	e.Add(Term{Name: "cuda_context", Part: PartOverhead, Bytes: 1 << 30})
	assert.Equal(t, before+(1<<30), e.TotalBytes())
	assert.Equal(t, float64(1<<30), e.OverheadBytes())
	assert.Equal(t, e.Megatron.TotalBytes()+(1<<30), e.TotalBytes())
}

func TestCheckPointsAtKeys(t *testing.T) {
	c := llama()
	c.NumExperts, c.MoEFFNHiddenSize, c.MoESharedExpertIntermediateSize = 8, 1000, 1002
	got := Check(c, Parallel{NumRanks: 64, TP: 4, PP: 3, ExptTP: 16, VPP: 2, EP: 1}, Training{})
	var keys []string
	for _, v := range got {
		keys = append(keys, v.Rule+" "+v.Key)
	}
	assert.Equal(t, []string{
		"ffn-not-divisible model.moe_shared_expert_intermediate_size",
		"ffn-not-divisible model.moe_ffn_hidden_size",
		"layers-not-divisible model.num_layers",
		"moe-tp-needs-sequence-parallel tp",
	}, keys)
}
