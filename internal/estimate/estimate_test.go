package estimate_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/estimate"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// cases are layouts with and without models: every example layout, the
// measured ones (whose figures internal/model checks against Megatron's
// own), a golden layout without any model, and one whose model breaks a
// rule.
func cases(t *testing.T) map[string]*validate.Result {
	t.Helper()
	files := testutil.Layouts(t, "*.yaml")
	measured, err := filepath.Glob(filepath.Join(testutil.RepoRoot(), "testdata", "measured", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, measured)
	files = append(files, measured...)
	files = append(files, testutil.GoldenLayouts(t, "case-0000.yaml")...)
	out := map[string]*validate.Result{}
	for _, f := range files {
		res, err := validate.Load(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = res
	}
	src := "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, model: {preset: llama3-8b}}\n" +
		"- {name: language, num_ranks: 4, tp: 4, model: {num_layers: 2, hidden_size: 6, num_attention_heads: 4, seq_length: 16, vocab_size: 32}}\n"
	l, d := layout.Parse("broken-model.yaml", []byte(src))
	out["broken-model.yaml"] = validate.Check(l, d)
	return out
}

// Build reports model's figures for every estimated module and names the
// others, each module once.
func TestBuild(t *testing.T) {
	t.Parallel()
	estimated := 0
	for name, res := range cases(t) {
		t.Run(name, func(t *testing.T) {
			doc := estimate.Build(res)
			assert.Equal(t, res.Layout.File, doc.File)
			assert.Equal(t, res.Layout.GPUMemory, doc.GPUMemoryBytes)
			require.NotNil(t, doc.Modules)
			require.NotNil(t, doc.NotEstimated)
			require.Len(t, doc.Modules, len(res.Estimates))
			var seen []string
			for i, m := range doc.Modules {
				me := res.Estimates[i]
				e := me.Estimate
				assert.Equal(t, me.Name, m.Name)
				seen = append(seen, m.Name)
				// model's figures, rounded to whole bytes and parameters.
				assert.Equal(t, int64(math.Round(e.Megatron.Parameters)), m.Parameters)
				assert.Equal(t, int64(math.Round(e.Megatron.ActiveParameters)), m.ActiveParameters)
				assert.Equal(t, int64(math.Round(e.WeightAndOptimizerBytes())), m.WeightAndOptimizerBytes)
				assert.Equal(t, int64(math.Round(e.ActivationBytes())), m.ActivationBytes)
				assert.Equal(t, int64(math.Round(e.OverheadBytes())), m.OverheadBytes)
				assert.Equal(t, int64(math.Round(e.TotalBytes())), m.TotalBytes)
				assert.Equal(t, e.Megatron.FLOPsPerSample, m.FLOPsPerSample)
				assert.Equal(t, e.Megatron, m.Megatron.Megatron)
				// The sums: the total is its parts; mimoplan's figure is
				// Megatron's plus the terms of each part.
				assert.InDelta(t, m.WeightAndOptimizerBytes+m.ActivationBytes+m.OverheadBytes, m.TotalBytes, 2)
				assert.Equal(t, m.Megatron.WeightAndOptimizerBytes+m.Megatron.ActivationBytes, m.Megatron.TotalBytes)
				parts := map[model.Part]float64{}
				for _, term := range m.Terms {
					parts[term.Part] += term.Bytes
				}
				assert.InDelta(t, m.Megatron.WeightAndOptimizerBytes+parts[model.PartWeights], float64(m.WeightAndOptimizerBytes), 1)
				assert.InDelta(t, m.Megatron.ActivationBytes+parts[model.PartActivations], float64(m.ActivationBytes), 1)
				assert.InDelta(t, parts[model.PartOverhead], float64(m.OverheadBytes), 1)
				assert.NotNil(t, m.Terms)
				assert.LessOrEqual(t, m.ActiveParameters, m.Parameters)
				// The sizes the figures are for: the module's.
				p, lm := me.Parallel, res.Layout.Modules[me.Index]
				assert.Equal(t, map[string]int{"num_ranks": p.NumRanks, "tp": p.TP, "gtp_remat": p.GTPRemat, "cp": p.CP, "pp": p.PP,
					"vpp": p.VPP, "dp": p.DP, "ep": p.EP, "expt_tp": p.ExptTP, "expt_gtp_remat": p.ExptGTPRemat}, m.Parallel)
				assert.Equal(t, lm.NumRanks, m.Parallel["num_ranks"])
				assert.Equal(t, lm.TP, m.Parallel["tp"])
				assert.Equal(t, lm.PP, m.Parallel["pp"])
				assert.Equal(t, m.Parallel["num_ranks"], m.Parallel["tp"]*m.Parallel["gtp_remat"]*m.Parallel["cp"]*m.Parallel["pp"]*m.Parallel["dp"])
				assert.Equal(t, me.Training, m.Training)
				assert.NotEmpty(t, m.MegatronArgs.Model)
				estimated++
			}
			seen = append(seen, doc.NotEstimated...)
			var want []string
			for _, lm := range res.Layout.Modules {
				if lm.Name != "" {
					want = append(want, lm.Name)
				}
			}
			assert.ElementsMatch(t, want, seen, "every module once, estimated or not")
		})
	}
	assert.Positive(t, estimated)
}

func TestBuildBrokenModel(t *testing.T) {
	t.Parallel()
	doc := estimate.Build(cases(t)["broken-model.yaml"])
	require.Len(t, doc.Modules, 1)
	assert.Equal(t, "vision", doc.Modules[0].Name)
	assert.Equal(t, []string{"language"}, doc.NotEstimated, "hidden_size 6 is not divisible by 4 heads")
}

// PrintJSON is Build's report, and reads back to the same numbers.
func TestPrintJSON(t *testing.T) {
	t.Parallel()
	for name, res := range cases(t) {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, estimate.PrintJSON(&b, res))
			var raw map[string]any
			require.NoError(t, json.Unmarshal(b.Bytes(), &raw))
			assert.IsType(t, []any{}, raw["modules"], "an array, never null")
			assert.IsType(t, []any{}, raw["not_estimated"])
			var got estimate.Report
			require.NoError(t, json.Unmarshal(b.Bytes(), &got))
			want := estimate.Build(res)
			// MegatronArgs hold any values (json reads numbers back as
			// float64): compare them as JSON, the rest as values.
			for i := range want.Modules {
				wa, err := json.Marshal(want.Modules[i].MegatronArgs)
				require.NoError(t, err)
				ga, err := json.Marshal(got.Modules[i].MegatronArgs)
				require.NoError(t, err)
				assert.JSONEq(t, string(wa), string(ga))
				want.Modules[i].MegatronArgs, got.Modules[i].MegatronArgs = model.Args{}, model.Args{}
			}
			assert.Equal(t, want, got)
		})
	}
}

// PrintTable shows the numbers of PrintJSON, rounded: a row per estimated
// module, a line per term, a line per module not estimated.
func TestPrintTableAgreesWithJSON(t *testing.T) {
	t.Parallel()
	for name, res := range cases(t) {
		t.Run(name, func(t *testing.T) {
			var tb, jb bytes.Buffer
			require.NoError(t, estimate.PrintTable(&tb, res))
			require.NoError(t, estimate.PrintJSON(&jb, res))
			var doc estimate.Report
			require.NoError(t, json.Unmarshal(jb.Bytes(), &doc))
			lines := strings.Split(strings.TrimSuffix(tb.String(), "\n"), "\n")
			rows := map[string][]string{}
			if len(doc.Modules) == 0 {
				assert.NotContains(t, tb.String(), "module  params", "no table without an estimated module")
			} else {
				require.Equal(t, []string{"module", "params", "active", "weights", "activ.", "overhead", "total", "Megatron", "TFLOP"}, strings.Fields(lines[0]))
				require.True(t, strings.HasPrefix(strings.TrimSpace(lines[1]), "---"))
				for _, l := range lines[2 : 2+len(doc.Modules)] {
					f := strings.Fields(l)
					require.Len(t, f, 9, l)
					rows[f[0]] = f[1:]
				}
			}
			const gib = 1 << 30
			for _, m := range doc.Modules {
				row, ok := rows[m.Name]
				require.True(t, ok, "no row for %s", m.Name)
				assert.InDelta(t, float64(m.Parameters), params(t, row[0]), halfUnit(row[0]))
				assert.InDelta(t, float64(m.ActiveParameters), params(t, row[1]), halfUnit(row[1]))
				for i, v := range []float64{float64(m.WeightAndOptimizerBytes), float64(m.ActivationBytes), float64(m.OverheadBytes), float64(m.TotalBytes), m.Megatron.TotalBytes} {
					assert.InDelta(t, v/gib, number(t, row[2+i]), 0.005+1e-9, "%s column %d", m.Name, 3+i)
				}
				assert.InDelta(t, m.FLOPsPerSample/1e12, number(t, row[7]), 0.05+1e-9)
				assert.Contains(t, tb.String(), m.Name+": Megatron's "+m.Megatron.ActivationFormula+"\n")
			}
			terms := 0
			for _, m := range doc.Modules {
				terms += len(m.Terms)
			}
			signed := 0
			for _, l := range lines {
				if strings.HasPrefix(l, "  +") || strings.HasPrefix(l, "  -") {
					signed++
				}
			}
			assert.Equal(t, terms, signed, "a line per term")
			for _, n := range doc.NotEstimated {
				assert.Contains(t, lines, n+": not estimated (no model, or a rule above fails)")
			}
			if doc.GPUMemoryBytes > 0 {
				assert.Contains(t, tb.String(), "GPU memory (cluster.gpu_memory): ")
			}
		})
	}
}

func number(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err, s)
	return v
}

// params reads 629.3M or 8.03B.
func params(t *testing.T, s string) float64 {
	t.Helper()
	switch {
	case strings.HasSuffix(s, "B"):
		return number(t, strings.TrimSuffix(s, "B")) * 1e9
	case strings.HasSuffix(s, "M"):
		return number(t, strings.TrimSuffix(s, "M")) * 1e6
	}
	t.Fatalf("not a parameter count: %q", s)
	return 0
}

// halfUnit is the rounding of a count as printed: 0.05M or 0.005B.
func halfUnit(s string) float64 {
	if strings.HasSuffix(s, "B") {
		return 0.005e9 + 1
	}
	return 0.05e6 + 1
}

// The documented largest model sizes (every dimension 2^24) gave
// "parameters": -9223372036854775808 in JSON and negative GiB in the
// table: estimate refuses them, naming the module and the figure.
func TestEstimateRefusesFiguresPastInt64(t *testing.T) {
	src := "version: 1\nworld_size: 1\nmodules:\n  - name: language\n    num_ranks: 1\n    model: {num_layers: 16777216, hidden_size: 16777216, num_attention_heads: 1, seq_length: 16777216, vocab_size: 16777216, ffn_hidden_size: 16777216}\n"
	l, d := layout.Parse("big.yaml", []byte(src))
	res := validate.Check(l, d)
	var out bytes.Buffer
	for _, print := range []func(io.Writer, *validate.Result) error{estimate.PrintJSON, estimate.PrintTable} {
		err := print(&out, res)
		require.ErrorContains(t, err, `module "language": the model gives parameters 2.83e+22, more than 4611686018427387904`)
		code, ok := exitcode.Of(err)
		assert.True(t, ok)
		assert.Equal(t, exitcode.Invalid, code)
	}
	assert.Empty(t, out.String(), "nothing printed")
}
