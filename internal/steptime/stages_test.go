package steptime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// TestStages: the busiest stage's layers and how many fewer the last
// stage holds, both over layers/pp, counting MTP layers on the last stage.
func TestStages(t *testing.T) {
	cfg := model.Config{NumLayers: 126, HiddenSize: 1024, NumAttentionHeads: 8, SeqLength: 2048, VocabSize: 32000}
	mtp := cfg
	mtp.NumLayers, mtp.MTPNumLayers = 61, 1
	for _, tc := range []struct {
		name           string
		cfg            model.Config
		split          model.Split
		pp, vpp        int
		imb, lastShort float64
	}{
		{"even", cfg, model.Split{}, 7, 0, 1, 0},
		{"one stage", cfg, model.Split{AccountLoss: true}, 1, 0, 1, 0},
		// 126 + 2 over 8 stages: 15, 16 x 6, 15.
		{"account both", cfg, model.Split{AccountEmbedding: true, AccountLoss: true}, 8, 0, 16.0 * 8 / 126, 1 - 15.0*8/126},
		// 6 on the first stage, 120 over the 4 others: 30 each.
		{"first", cfg, model.Split{First: 6}, 5, 0, 30.0 * 5 / 126, 1 - 30.0*5/126},
		{"refused split", cfg, model.Split{First: 5}, 5, 0, 1, 0},
		// 61 layers and the MTP layer: 4 on every stage but the last, which
		// holds 1 and the MTP layer (62 / 16 even).
		{"layout with mtp", mtp, model.Split{Layout: "Et*4|(t*4|)*14tmL"}, 16, 0, 4.0 * 16 / 62, 1 - 2.0*16/62},
		// Without a layout Megatron puts the MTP layer on the last stage.
		{"even with mtp", func() model.Config { c := mtp; c.NumLayers = 64; return c }(), model.Split{}, 8, 0, 9.0 * 8 / 65, 1 - 9.0*8/65},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &layout.Module{Model: &layout.Model{Config: tc.cfg}, Split: tc.split}
			imb, last := steptime.Stages(m, model.Parallel{NumRanks: tc.pp, TP: 1, CP: 1, PP: tc.pp, VPP: tc.vpp, DP: 1, EP: 1, ExptTP: 1, Split: tc.split})
			assert.InDelta(t, tc.imb, imb, 1e-12, "imbalance")
			assert.InDelta(t, tc.lastShort, last, 1e-12, "last stage short")
		})
	}
	imb, last := steptime.Stages(&layout.Module{}, model.Parallel{PP: 4, Split: model.Split{AccountLoss: true}})
	assert.Equal(t, [2]float64{1, 0}, [2]float64{imb, last}, "no model")
}
