package steptime

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mimoplan/mimoplan/internal/model"
)

// TestPaceDeferral: a sample of 100 FLOPs, 12 of them the output layer's,
// over pp 4 (22 a stage, 25 an even stage's share). Without deferral the
// last stage's 22 + 12 pace the pipeline; deferring takes a third of the
// output layer (4) off the deferred micro-batches' share of it, and the
// flush exposes the deferred 4 a micro-batch beyond the cool-down wait of
// (pp-1)/vpp backward passes of a stage (2/3 of 22 each).
func TestPaceDeferral(t *testing.T) {
	s := &Shape{FLOPsPerSample: 100, Dims: Dims{LogitsFLOPsPerSample: 12}}
	for _, tc := range []struct {
		name          string
		tr            model.Training
		vpp, mb       int
		bound         bool
		steady, flush float64
	}{
		{"no deferral", model.Training{}, 1, 8, false, 34.0 / 25, 0},
		{"all 8 deferred, hidden by the wait of 44", model.Training{DeferEmbeddingWgradCompute: true}, 1, 8, false, 30.0 / 25, 0},
		{"all 16 deferred, 64 - 44 exposed", model.Training{DeferEmbeddingWgradCompute: true}, 1, 16, false, 30.0 / 25, 20.0 / 16 / 25},
		{"4 of 16 deferred", model.Training{DeferEmbeddingWgradCompute: true, WgradDeferralLimit: 4}, 1, 16, false, 33.0 / 25, 0},
		{"vpp 4: a wait of 11", model.Training{DeferEmbeddingWgradCompute: true}, 4, 16, false, 30.0 / 25, 53.0 / 16 / 25},
		{"the bound: all deferred, no flush", model.Training{DeferEmbeddingWgradCompute: true, WgradDeferralLimit: 4}, 1, 16, true, 30.0 / 25, 0},
		{"a negative limit defers nothing", model.Training{DeferEmbeddingWgradCompute: true, WgradDeferralLimit: -1}, 1, 16, false, 34.0 / 25, 0},
	} {
		c := &Calibrated{Train: tc.tr}
		steady, flush := c.pace(s, &Module{PP: 4, VPP: tc.vpp, Microbatches: tc.mb}, tc.bound)
		assert.InDelta(t, tc.steady, steady, 1e-12, tc.name)
		assert.InDelta(t, tc.flush, flush, 1e-12, tc.name)
	}
	// pp 1: no pipeline, nothing to defer.
	steady, flush := (&Calibrated{Train: model.Training{DeferEmbeddingWgradCompute: true}}).pace(s, &Module{PP: 1, Microbatches: 8}, false)
	assert.Equal(t, [2]float64{1, 0}, [2]float64{steady, flush})
}
