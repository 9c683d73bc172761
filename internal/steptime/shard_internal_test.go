package steptime

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// measuredGEMM is one of attention-h100.json's fp8_gemms: a shape timed in
// bf16 and in fp8.
type measuredGEMM struct {
	M, N, K     float64
	BF16s, FP8s float64
}

func loadGEMMs(t *testing.T) []measuredGEMM {
	t.Helper()
	var f struct {
		GEMMs []struct {
			M     float64 `json:"m"`
			N     float64 `json:"n"`
			K     float64 `json:"k"`
			BF16s float64 `json:"bf16_s"`
			FP8s  float64 `json:"fp8_s"`
		} `json:"fp8_gemms"`
	}
	testutil.LoadMeasured(t, "attention-h100.json", &f)
	require.NotEmpty(t, f.GEMMs)
	gs := make([]measuredGEMM, len(f.GEMMs))
	for i, g := range f.GEMMs {
		gs[i] = measuredGEMM{g.M, g.N, g.K, g.BF16s, g.FP8s}
	}
	return gs
}

// rooflineError is r's relative squared error over the measured GEMMs
// (what scripts/fit-gemm-roofline.py minimises) and its rms log error.
func rooflineError(gs []measuredGEMM, r roofline, fp8 bool) (sse, rmsLog float64) {
	h := Devices["H100"]
	for _, g := range gs {
		peak, want := h.BF16, g.BF16s
		if fp8 {
			peak, want = h.FP8, g.FP8s
		}
		got := r.gemmTime(g.M, g.N, g.K, peak, h.HBM)
		sse += (got/want - 1) * (got/want - 1)
		rmsLog += math.Log(got/want) * math.Log(got/want)
	}
	return sse, math.Sqrt(rmsLog / float64(len(gs)))
}

// The rooflines are the least-squares fit of the lent H100's GEMMs: each
// describes its dtype's 96 measured shapes within the error the script
// prints, and moving any of its figures by 1% fits them no better (beyond
// the rounding of the figures).
func TestRooflineFitsMeasuredGEMMs(t *testing.T) {
	gs := loadGEMMs(t)
	for _, tt := range []struct {
		name   string
		r      roofline
		fp8    bool
		rmsLog float64
	}{
		{"bf16", bf16Roofline, false, 0.063},
		{"fp8", fp8Roofline, true, 0.054},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sse, rms := rooflineError(gs, tt.r, tt.fp8)
			assert.LessOrEqual(t, rms, tt.rmsLog)
			for _, f := range []func(*roofline) *float64{
				func(r *roofline) *float64 { return &r.peakShare },
				func(r *roofline) *float64 { return &r.hbmShare },
				func(r *roofline) *float64 { return &r.fixed },
			} {
				for _, step := range []float64{0.99, 1.01} {
					moved := tt.r
					*f(&moved) *= step
					got, _ := rooflineError(gs, moved, tt.fp8)
					assert.GreaterOrEqual(t, got, sse*(1-1e-3), "a figure moved by %g fits better: %+v", step, moved)
				}
			}
		})
	}
}

// shardPenalty: 1 unsplit, never below 1, growing with the split, and
// larger for fp8 GEMMs, whose FLOPs take half the time but whose output
// and fixed time do not shrink.
func TestShardPenalty(t *testing.T) {
	// Llama 3 70B's dense layer at 8,192 tokens a micro-batch.
	s := &Shape{Hidden: 8192, KVDim: 1024, Dims: Dims{FFN: 28672, Gated: true}}
	var buf [4]linear
	layers := denseLayers(s, &buf)
	require.Len(t, layers, 4)
	bf16 := NewCalibrated(Devices["H100"], Job{}, model.Training{})
	fp8 := NewCalibrated(Devices["H100"], Job{}, model.Training{FP8: "hybrid"})
	for _, c := range []*Calibrated{bf16, fp8} {
		assert.Equal(t, 1.0, c.shardPenalty(8192, layers, 1))
		prev := 1.0
		for _, tp := range []int{2, 4, 8, 16, 64} {
			p := c.shardPenalty(8192, layers, tp)
			assert.Greater(t, p, prev, "tp %d", tp)
			prev = p
		}
		// Fewer tokens: the fixed time weighs more.
		assert.Greater(t, c.shardPenalty(1024, layers, 8), c.shardPenalty(8192, layers, 8))
	}
	for _, tp := range []int{2, 4, 8} {
		assert.Greater(t, fp8.shardPenalty(8192, layers, tp), bf16.shardPenalty(8192, layers, tp), "tp %d", tp)
	}
	// A MoE model whose every layer is MoE splits no dense MLP: its
	// penalty is its attention's, whatever ffn_hidden_size says.
	var b1, b2 [4]linear
	allMoE := &Shape{Hidden: 8192, KVDim: 1024, Layers: 4, MoELayers: 4, Dims: Dims{FFN: 28672, Gated: true}}
	noMLP := &Shape{Hidden: 8192, KVDim: 1024, Layers: 4, MoELayers: 4, Dims: Dims{FFN: 64}}
	assert.InDelta(t, fp8.shardPenalty(8192, denseLayers(noMLP, &b2), 8), fp8.shardPenalty(8192, denseLayers(allMoE, &b1), 8), 1e-12)
	half := &Shape{Hidden: 8192, KVDim: 1024, Layers: 4, MoELayers: 2, Dims: Dims{FFN: 28672, Gated: true}}
	assert.NotEqual(t, fp8.shardPenalty(8192, denseLayers(half, &b2), 8), fp8.shardPenalty(8192, denseLayers(allMoE, &b1), 8))
	// Without the widths there is nothing to split.
	assert.Nil(t, denseLayers(&Shape{Hidden: 8192}, &buf))
	assert.Equal(t, 1.0, fp8.shardPenalty(8192, nil, 8))
	// The local stack measures its own GEMMs: no penalty there.
	local := NewCalibrated(Devices["H100"], Job{Samples: 8, MicroBatch: 1}, model.Training{TransformerImpl: "local"})
	shape := &Shape{FLOPsPerSample: 1e13, Layers: 8, Hidden: 8192, Seq: 8192, KVDim: 1024, Dims: Dims{FFN: 28672, Gated: true}}
	one, eight := local.Time(shape, Module{Ranks: 1, TP: 1, PP: 1, DP: 1, Microbatches: 8}), local.Time(shape, Module{Ranks: 8, TP: 8, PP: 1, DP: 1, Microbatches: 8})
	flat := *shape
	flat.Dims = Dims{}
	oneFlat, eightFlat := local.Time(&flat, Module{Ranks: 1, TP: 1, PP: 1, DP: 1, Microbatches: 8}), local.Time(&flat, Module{Ranks: 8, TP: 8, PP: 1, DP: 1, Microbatches: 8})
	assert.InDelta(t, eight.Compute/one.Compute, eightFlat.Compute/oneFlat.Compute, 1e-9)
}

// shardCase is one of shard-gemms-h100.json's layers split tp ways.
type shardCase struct {
	Layer   string  `json:"layer"`
	Hidden  int     `json:"hidden"`
	KV      *int    `json:"kv"` // nil: a routed expert
	FFN     int     `json:"ffn"`
	Gated   bool    `json:"gated"`
	Tokens  float64 `json:"tokens"`
	TP      int     `json:"tp"`
	Dtype   string  `json:"dtype"`
	Penalty float64 `json:"penalty"`
}

// predictedPenalty is shardPenalty for c's layer, tokens, tp and dtype on
// an H100.
func predictedPenalty(c *shardCase) float64 {
	s := &Shape{Hidden: c.Hidden, Dims: Dims{FFN: c.FFN, MoEFFN: c.FFN, Gated: c.Gated}}
	var buf [4]linear
	layers := expertLayers(s, &buf)
	if c.KV != nil {
		s.KVDim = *c.KV
		layers = denseLayers(s, &buf)
	}
	var tr model.Training
	if c.Dtype == "fp8" {
		tr.FP8 = "hybrid"
	}
	return NewCalibrated(Devices["H100"], Job{}, tr).shardPenalty(c.Tokens, layers, c.TP)
}

// The check of shardPenalty on layers its roofline was not fitted to:
// published models' layers and experts, their GEMMs split tp ways and
// timed on the lent H100 (scripts/measure-shard-gemms.py). Reported beside
// the prediction (docs/calibration.md) and held: the error, and that the
// term costs a split no more than the GPU measured, in the median.
func TestShardPenaltyMeasured(t *testing.T) {
	var f struct {
		Cases []shardCase `json:"cases"`
	}
	testutil.LoadMeasured(t, "shard-gemms-h100.json", &f)
	require.NotEmpty(t, f.Cases)
	var b strings.Builder
	b.WriteString("| layer | tokens | dtype | tp 2 measured / predicted | tp 4 | tp 8 |\n|---|---|---|---|---|---|\n")
	var logs, ratios []float64
	row := ""
	for i := range f.Cases {
		c := &f.Cases[i]
		if c.TP == 1 {
			row = fmt.Sprintf("| %s | %.0f | %s |", c.Layer, c.Tokens, c.Dtype)
			continue
		}
		p := predictedPenalty(c)
		logs = append(logs, math.Log(p/c.Penalty))
		ratios = append(ratios, c.Penalty/p)
		row += fmt.Sprintf(" %.3f / %.3f |", c.Penalty, p)
		if c.TP == 8 {
			b.WriteString(row + "\n")
		}
	}
	var sq float64
	for _, l := range logs {
		sq += l * l
	}
	rms := math.Sqrt(sq / float64(len(logs)))
	sort.Float64s(ratios)
	med := ratios[len(ratios)/2]
	fmt.Fprintf(&b, "\nOver the %d splits: rms log error %.3f; measured / predicted median %.3f, from %.3f to %.3f.\n", len(logs), rms, med, ratios[0], ratios[len(ratios)-1])
	t.Log("\n" + b.String())
	assert.LessOrEqual(t, rms, 0.17, "rms log error of the predicted penalties")
	assert.GreaterOrEqual(t, med, 1.0, "the term costs a split more than the GPU measured, in the median")
	testutil.CheckDocTable(t, "docs/calibration.md", "shard penalties", b.String())
}
