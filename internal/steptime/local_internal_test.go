package steptime

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// optimizerCase is one optimizer measurement of components-h200.json.
type optimizerCase struct {
	Case struct {
		Layers, Hidden, Experts int
		MoEFFN                  int `json:"moe_ffn"`
		Distopt                 bool
	} `json:"case"`
	Params  float64 `json:"parameters_on_rank"`
	Tensors float64 `json:"tensors_on_rank"`
	Opt     float64 `json:"opt_s"`
	Zero    float64 `json:"zero_s"`
}

func loadOptimizerCases(t *testing.T) []optimizerCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "testdata", "measured", "components-h200.json"))
	require.NoError(t, err)
	var f struct {
		Optimizer []optimizerCase `json:"optimizer"`
	}
	require.NoError(t, json.Unmarshal(data, &f))
	require.NotEmpty(t, f.Optimizer)
	return f.Optimizer
}

// configOf is the GPTModel scripts/measure-components.py built for an
// optimizer case (its gpt_model and transformer_config).
func configOf(c *optimizerCase) model.Config {
	noBias := false
	cfg := model.Config{NumLayers: c.Case.Layers, HiddenSize: c.Case.Hidden, NumAttentionHeads: c.Case.Hidden / 128,
		KVChannels: 128, SeqLength: 1024, VocabSize: 50304}
	if c.Case.Experts > 0 {
		cfg.NumExperts, cfg.MoEFFNHiddenSize, cfg.MoERouterTopK = c.Case.Experts, c.Case.MoEFFN, 2
		cfg.Normalization, cfg.AddBiasLinear = "RMSNorm", &noBias
	}
	return cfg
}

// The tensor count the optimizer pays for is the one Megatron built, for
// dense and MoE models alike.
func TestTensorsAsMegatronBuilds(t *testing.T) {
	for _, c := range loadOptimizerCases(t) {
		cfg := configOf(&c)
		s := ShapeOf(&layout.Module{Model: &layout.Model{Config: cfg}})
		cal := NewCalibrated(Devices["H200"], Job{Samples: 1, MicroBatch: 1}, model.Training{TransformerImpl: "local"})
		got := cal.tensorsOnRank(&s, &Module{PP: 1, EP: 1})
		assert.Equal(t, c.Tensors, got, "%+v", c.Case)
	}
}

// The optimizer term against each measured step: within 15% where it was
// derived (without the distributed optimizer) and 35% where it was not
// (the distributed optimizer's shard holds more tensors than tensors/dp,
// and its step also all-gathers the parameters, which dpComm costs).
func TestLocalOptimizerMeasured(t *testing.T) {
	for _, c := range loadOptimizerCases(t) {
		cfg := configOf(&c)
		s := ShapeOf(&layout.Module{Model: &layout.Model{Config: cfg}})
		cal := NewCalibrated(Devices["H200"], Job{Samples: 1, MicroBatch: 1},
			model.Training{TransformerImpl: "local", UseDistributedOptimizer: c.Case.Distopt})
		dp := 1
		if c.Case.Distopt {
			dp = 2
		}
		got := cal.localOptimizer(&s, &Module{PP: 1, EP: 1, DP: dp, Params: c.Params})
		want := c.Opt + c.Zero
		tol := 0.15
		if c.Case.Distopt {
			tol = 0.35
		}
		assert.LessOrEqual(t, math.Abs(got/want-1), tol, "%+v: model %.1f ms, measured %.1f ms", c.Case, got*1e3, want*1e3)
	}
}
