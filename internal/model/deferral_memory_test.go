package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDeferredWgrad: defer_embedding_wgrad_compute's buffers on the last
// stage. The shape makes one micro-batch's buffers exactly 1 GiB: 4,096
// tokens, the input 6,144 wide over tp 2 (sequence parallel), the output
// gradient 256,000 wide over tp 2, two bytes each. Past what the first
// stage holds more, each deferred micro-batch adds its GiB; the limit caps
// the micro-batches deferred; without a pipeline or the key there is none.
func TestDeferredWgrad(t *testing.T) {
	cfg := Config{NumLayers: 48, HiddenSize: 6144, NumAttentionHeads: 48, SeqLength: 4096, VocabSize: 256000}
	term := func(pp, microbatches, limit int, deferred bool) (float64, bool) {
		tr := Training{UseDistributedOptimizer: true, SequenceParallel: true, MicroBatchSize: 1,
			NumMicrobatches: microbatches, DeferEmbeddingWgradCompute: deferred, WgradDeferralLimit: limit}
		e := Compute(cfg, Parallel{NumRanks: 2 * pp, TP: 2, PP: pp}, tr)
		for _, x := range e.Terms {
			if x.Name == TermDeferredWgrad {
				return x.Bytes, true
			}
		}
		return 0, false
	}
	const gib = 1 << 30
	at20, ok20 := term(4, 20, 0, true)
	at30, ok30 := term(4, 30, 0, true)
	if assert.True(t, ok20) && assert.True(t, ok30) {
		assert.InDelta(t, 10*gib, at30-at20, 1, "ten more deferred micro-batches, ten GiB")
	}
	capped, _ := term(4, 64, 20, true)
	assert.InDelta(t, at20, capped, 1, "wgrad_deferral_limit 20 of 64 micro-batches holds 20")
	_, few := term(4, 4, 0, true)
	assert.False(t, few, "four micro-batches' buffers stay below what the first stage holds more")
	_, off := term(4, 30, 0, false)
	assert.False(t, off, "not deferring")
	_, flat := term(1, 30, 0, true)
	assert.False(t, flat, "no pipeline (refused by validate: defer-embedding-wgrad-needs)")
}

// TestLastStageLogits: the loss's logits on the last stage. One
// micro-batch of 8,192 tokens over a 262,144-wide vocabulary at tp 2 is
// 1 Gi logits, 4 GiB with Megatron's loss (unfused or native fused, an
// fp32 softmax), 2 GiB with Transformer Engine's (the gradient in place of
// the bf16 logits); the output layer's input (1,024 wide, bf16) comes on
// top. A narrow model whose first stage holds little more than the last
// shows the difference whole; without a pipeline there is no last stage,
// and the term moves the figure to the last stage's.
func TestLastStageLogits(t *testing.T) {
	cfg := Config{NumLayers: 2, HiddenSize: 1024, NumAttentionHeads: 8, SeqLength: 8192, VocabSize: 262144}
	term := func(pp int, tr Training) (float64, []Term) {
		tr.MicroBatchSize = 1
		e := Compute(cfg, Parallel{NumRanks: 2 * pp, TP: 2, PP: pp}, tr)
		for _, x := range e.Terms {
			if x.Name == TermLastStageLogits {
				return x.Bytes, e.Terms
			}
		}
		return 0, e.Terms
	}
	const gib = 1 << 30
	unfused, terms := term(2, Training{})
	native, _ := term(2, Training{CrossEntropyLossFusion: true})
	te, _ := term(2, Training{CrossEntropyLossFusion: true, CrossEntropyFusionImpl: "te"})
	teUnfused, _ := term(2, Training{CrossEntropyFusionImpl: "te"})
	assert.Positive(t, te)
	assert.Equal(t, unfused, native, "the native fused loss keeps the same fp32 softmax")
	assert.Equal(t, unfused, teUnfused, "the implementation matters only with the fusion")
	assert.InDelta(t, 2*gib, unfused-te, 1, "2 bytes a logit fewer with Transformer Engine's loss")
	assert.True(t, OffFirstStage(terms))
	flat, terms := term(1, Training{})
	assert.Zero(t, flat)
	assert.False(t, OffFirstStage(terms))
}
