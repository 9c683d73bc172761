package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func stageTerms(e Estimate) map[string]float64 {
	out := map[string]float64{}
	for _, t := range e.Terms {
		if t.Name == TermStageWeights || t.Name == TermStageActivations {
			out[t.Name] = t.Bytes
		}
	}
	return out
}

// TestBusiestStageByHand: 4 layers of width 64 (ffn 256, one head,
// LayerNorm, vocabulary 128, tied) on pp 2 with 1 layer on the first
// stage. Per layer: attention 4*64^2 = 16,384 and MLP 2*64*256 = 32,768
// tensor-parallel parameters, 2*64*2 = 256 replicated; embedding 8,192;
// final norm 128. Megatron's first stage: 4*49,152/2 + 8,192 = 106,496
// and (4*256 + 128)/2 = 576, 107,072 in all. The last stage holds 3
// layers, the tied output layer's copy and the final norm: 3*49,152 +
// 8,192 + 3*256 + 128 = 156,544; the first 49,152 + 8,192 + 256 = 57,600.
// Activations: the first stage keeps 1 layer x 2 micro-batches, the last
// 3 x 1, against the formula's 4: the last stage is the busiest.
func TestBusiestStageByHand(t *testing.T) {
	c := Config{NumLayers: 4, HiddenSize: 64, FFNHiddenSize: 256, NumAttentionHeads: 1, SeqLength: 128, VocabSize: 128}
	p := Parallel{NumRanks: 2, PP: 2, Split: Split{First: 1}}
	even := Compute(c, Parallel{NumRanks: 2, PP: 2}, Training{})
	e := Compute(c, p, Training{})
	require.Empty(t, stageTerms(even), "an even split keeps Megatron's first stage")
	got := stageTerms(e)
	wb, ab := even.WeightAndOptimizerBytes(), even.ActivationBytes()
	assert.InDelta(t, wb*(156544.0/107072-1), got[TermStageWeights], 1e-6)
	assert.InDelta(t, ab*(3.0/4-1), got[TermStageActivations], 1e-6)
	assert.Contains(t, e.Terms[len(e.Terms)-1].Why, "busiest stage is 1 of 2 (3 layers, the output layer, 1 micro-batches in flight)")
}

// TestBusiestStageMovesWithLayers: piling layers onto the last stage
// (the three others share the rest) never lowers the estimate once the
// last stage is the busiest.
func TestBusiestStageMovesWithLayers(t *testing.T) {
	c := Config{NumLayers: 32, HiddenSize: 1024, NumAttentionHeads: 8, SeqLength: 2048, VocabSize: 32000}
	prev := 0.0
	for last := 14; last <= 29; last += 3 {
		p := Parallel{NumRanks: 4, PP: 4, Split: Split{Last: last}}
		require.Empty(t, Check(c, p, Training{}), "last %d", last)
		e := Compute(c, p, Training{})
		tot := e.TotalBytes()
		assert.Greater(t, tot, prev, "last %d", last)
		prev = tot
	}
}
