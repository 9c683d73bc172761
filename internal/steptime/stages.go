package steptime

import (
	"slices"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
)

// Stages is what module m's pipeline split under p (p.Split, p.PP, p.VPP)
// gives the pace of its pipeline (Module.Imbalance, Module.LastShort), in
// layers counting the MTP layers: the busiest stage's layers over
// layers/pp, and how many fewer layers than layers/pp the last stage holds,
// over layers/pp. The last stage is the output layer's, which
// account_for_loss_in_pipeline_split or a pipeline layout's L stage
// lightens (model.StageLayers); it holds the MTP layers too (Megatron-LM
// multi_token_prediction.py:803-804 at d98e8a6 without a layout; the
// layouts this model meets put m there, and one that does not is read as
// if it did). An even split without MTP layers, a split Megatron refuses
// or a module without a model: 1 and 0.
func Stages(m *layout.Module, p model.Parallel) (imbalance, lastShort float64) {
	if m.Model == nil || p.PP <= 1 {
		return 1, 0
	}
	mtp := m.Model.Config.Resolve().MTPNumLayers
	if !p.Split.Uneven() && mtp == 0 {
		return 1, 0
	}
	stages := model.StageLayers(m.Model.Config, p)
	layers := m.Model.Config.NumLayers + mtp
	if len(stages) == 0 || layers == 0 {
		return 1, 0
	}
	last := float64(stages[len(stages)-1] + mtp)
	even := float64(layers) / float64(p.PP)
	return max(float64(slices.Max(stages)), last) / even, 1 - last/even
}
