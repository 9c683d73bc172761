package steptime

import (
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
)

// ShapeOf is module m's model as a step-time model reads it; the zero
// Shape without a model. FLOPs per sample are Megatron's
// num_floating_point_operations with the vocabulary padded for tp 1, the
// least any tp pads it to, so that the compute bound holds for every
// candidate.
func ShapeOf(m *layout.Module) Shape {
	if m.Model == nil {
		return Shape{}
	}
	c := m.Model.Config.Resolve()
	e := model.Compute(m.Model.Config, model.Parallel{NumRanks: 1, DP: 1}, model.Training{})
	s := Shape{
		FLOPsPerSample: e.Megatron.FLOPsPerSample,
		Layers:         c.NumLayers,
		Hidden:         c.HiddenSize,
		Seq:            c.SeqLength,
		TopK:           c.MoERouterTopK,
	}
	groups := c.NumQueryGroups
	if groups == 0 {
		groups = c.NumAttentionHeads
	}
	s.KVDim = groups * c.KVChannels
	s.Dims = DimsOf(m.Model.Config)
	if c.NumExperts > 0 {
		for i := 0; i < c.NumLayers; i++ {
			switch {
			case len(c.MoELayerPattern) > 0:
				if i < len(c.MoELayerPattern) && c.MoELayerPattern[i] == 1 {
					s.MoELayers++
				}
			case i%c.MoELayerFreq == 0:
				s.MoELayers++
			}
		}
	}
	return s
}

// ShapeIn is ShapeOf(m) with what the layout's training block says of m
// (sequence parallelism, which layout.ModelTraining gives the language
// module alone).
func ShapeIn(spec *layout.Layout, m *layout.Module) Shape {
	s := ShapeOf(m)
	if m.Model != nil {
		s.Dims.SequenceParallel = spec.ModelTraining(m, 1).SequenceParallel
	}
	return s
}
