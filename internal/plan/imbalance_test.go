package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
)

// TestImbalance: the busiest stage's layers over num_layers/pp, which
// the step-time model scales the module's compute by.
func TestImbalance(t *testing.T) {
	llama := &layout.Model{Config: model.Config{NumLayers: 126, HiddenSize: 1024, NumAttentionHeads: 8, SeqLength: 2048, VocabSize: 32000}}
	for _, tc := range []struct {
		name  string
		split model.Split
		pp    int
		want  float64
	}{
		{"even", model.Split{}, 7, 1},
		// 126 + 2 over 8 stages: 15, 16 x 6, 15.
		{"account both", model.Split{AccountEmbedding: true, AccountLoss: true}, 8, 16.0 * 8 / 126},
		// 6 on the first stage, 120 over the 4 others: 30 each.
		{"first", model.Split{First: 6}, 5, 30.0 * 5 / 126},
		{"refused split", model.Split{First: 5}, 5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &layout.Module{Model: llama, Split: tc.split}
			c := &Choice{Sizes: Sizes{TP: 1, CP: 1, PP: tc.pp, EP: 1, ExptTP: 1, GTPRemat: 1, ExptGTPRemat: 1}}
			assert.InDelta(t, tc.want, Imbalance(m, c), 1e-12)
		})
	}
}
