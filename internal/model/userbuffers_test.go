package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUserBuffers: Transformer Engine's userbuffers in Total. Llama 3 70B's
// shape at 8,192 tokens makes the fp8 buffers exactly 1 GiB (12 buffers
// of 8,192 x 8,192, eight of them at 1 byte and four at 2: 16 bytes a
// token and hidden unit); bf16 keeps all twelve at 2 bytes. The buffer
// grows with the micro-batch, shrinks with cp, and is not there without
// the key or at tp 1 (Megatron initializes no userbuffers then).
func TestUserBuffers(t *testing.T) {
	cfg := Config{NumLayers: 80, HiddenSize: 8192, NumAttentionHeads: 64, SeqLength: 8192, VocabSize: 128256}
	term := func(tp, cp, mbs int, overlap bool, fp8 string) (float64, bool) {
		tr := Training{UseDistributedOptimizer: true, SequenceParallel: tp > 1, MicroBatchSize: mbs,
			NumMicrobatches: 8, TPCommOverlap: overlap, FP8: fp8}
		e := Total(cfg, Parallel{NumRanks: 64, TP: tp, CP: cp, PP: 4}, tr)
		for _, x := range e.Terms {
			if x.Name == TermUserBuffers {
				assert.Equal(t, PartOverhead, x.Part)
				return x.Bytes, true
			}
		}
		return 0, false
	}
	const gib = 1 << 30
	cases := []struct {
		name        string
		tp, cp, mbs int
		overlap     bool
		fp8         string
		want        float64
		present     bool
	}{
		{"fp8, 8,192 tokens", 4, 1, 1, true, "hybrid", gib, true},
		{"bf16 keeps every buffer at 2 bytes", 4, 1, 1, true, "", 1.5 * gib, true},
		{"micro batch 2 doubles the rows", 4, 1, 2, true, "hybrid", 2 * gib, true},
		{"cp 2 halves them", 4, 2, 1, true, "hybrid", 0.5 * gib, true},
		{"the same at any tp", 8, 1, 1, true, "hybrid", gib, true},
		{"no tp_comm_overlap", 4, 1, 1, false, "hybrid", 0, false},
		{"tp 1", 1, 1, 1, true, "hybrid", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := term(c.tp, c.cp, c.mbs, c.overlap, c.fp8)
			assert.Equal(t, c.present, ok)
			assert.InDelta(t, c.want, got, 1)
		})
	}
}
