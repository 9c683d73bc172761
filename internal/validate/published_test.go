package validate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// gpuMiB is each published run's GPU memory as nvidia-smi reports it: H100
// 80GB HBM3 81559 MiB (measured here, docs/estimate.md), A100 80GB 81920
// MiB, B200 183359 MiB (NVIDIA's data sheets: 80 GB and 180 GB of HBM).
var gpuMiB = map[string]int{"H100": 81559, "A100": 81920, "B200": 183359}

// refusedRecipes are the published runs mimoplan still refuses, each with
// why (docs/estimate.md, "Published recipes"); the test fails when one of
// them fits, so the list only shrinks.
var refusedRecipes = map[string]string{
	"mixtral-8x22b-64k-nemo.yaml": "no recompute at 64k tokens: each MoE layer's experts keep, on a rank, 65,536 routed copies (16,384 tokens, top 2, gathered over expert tp 2) of a 8,192-wide SwiGLU half, 6 bytes a value: 3 GiB a layer, and the first stage holds 59 layers' worth (pp 4, vpp 14); the recipe has no published run",
}

// publishedRun is a published run as a layout.
type publishedRun struct{ name, text string }

// No published recipe that ran is refused for memory: every layout of
// testdata/published (but those refusedRecipes names) and every row of
// testdata/calibration/published.yaml validates without gpu-memory-short
// on its own GPU.
func TestPublishedRunsFit(t *testing.T) {
	var runs []publishedRun
	files, err := filepath.Glob("../../testdata/published/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		runs = append(runs, publishedRun{filepath.Base(f), string(data)})
	}
	runs = append(runs, publishedRows(t)...)
	var report []string
	for _, r := range runs {
		l, d := layout.Parse(r.name, []byte(r.text))
		res := validate.Check(l, d)
		var short []string
		for _, x := range res.Diags.Items {
			if x.Rule == string(diag.RuleGPUMemoryShort) {
				short = append(short, x.Message)
			}
		}
		peak := 0.0
		for _, e := range res.Estimates {
			peak = max(peak, e.Estimate.TotalBytes())
		}
		if len(res.Estimates) == 0 {
			// Uneven pipelines (num_layers not a multiple of pp) need
			// per-stage layer counts the layout cannot state yet.
			var rules []string
			for _, x := range res.Diags.Items {
				rules = append(rules, x.Rule)
			}
			assert.Contains(t, rules, "layers-not-divisible", "%s: not estimated: %v", r.name, rules)
			report = append(report, fmt.Sprintf("%-55s not estimated: %s", r.name, strings.Join(rules, ", ")))
			continue
		}
		report = append(report, fmt.Sprintf("%-55s %7.2f GiB of %7.2f GiB", r.name, peak/(1<<30), float64(l.GPUMemory)/(1<<30)))
		if why, ok := refusedRecipes[r.name]; ok {
			assert.NotEmpty(t, short, "%s is refused: %s", r.name, why)
			continue
		}
		assert.Empty(t, short, "%s ran as published", r.name)
	}
	sort.Strings(report)
	t.Log("\n" + strings.Join(report, "\n"))
}

// publishedRows builds a layout from each row of published.yaml as
// internal/plan's comparison does (testutil.Calibration.Layout: the row's
// model, sizes, pipeline split, batch and training, the source's common
// settings, fp8 for an fp8 row), on its GPU as nvidia-smi reports it.
func publishedRows(t *testing.T) []publishedRun {
	t.Helper()
	f := testutil.LoadCalibration(t)
	var out []publishedRun
	for _, r := range f.Rows {
		mem, ok := gpuMiB[r.GPU]
		require.True(t, ok, "%s: GPU %s", r.ID, r.GPU)
		text, err := f.Layout(r, false, fmt.Sprintf("%dMiB", mem))
		require.NoError(t, err)
		out = append(out, publishedRun{r.ID, string(text)})
	}
	return out
}

// Megatron-LM's MIMO functional test as a layout (freeze on both modules,
// the batch split as the runtime splits it): the modules' allocations
// (weights and activations, without what lies outside PyTorch's
// allocations) are within 10% of its golden mem-max-allocated-bytes.
func TestMIMOGoldenLayout(t *testing.T) {
	raw, err := os.ReadFile("../../internal/model/testdata/mimo-llava-golden.json")
	require.NoError(t, err)
	var g struct {
		MaxAllocated float64 `json:"mem_max_allocated_bytes"`
	}
	require.NoError(t, json.Unmarshal(raw, &g))
	res, err := validate.Load("../../testdata/published/llava-mimo-functional-test.yaml")
	require.NoError(t, err)
	// It ran (colocated at cp 2 on the global groups: no communicator).
	assert.True(t, res.Valid(true), "%v", res.Diags.Items)
	require.Len(t, res.Estimates, 2)
	allocated := 0.0
	for _, e := range res.Estimates {
		assert.True(t, e.Training.Frozen, e.Name)
		allocated += e.Estimate.WeightAndOptimizerBytes() + e.Estimate.ActivationBytes()
	}
	t.Logf("golden %.0f MiB, mimoplan %.0f MiB (%.3f)", g.MaxAllocated/(1<<20), allocated/(1<<20), allocated/g.MaxAllocated)
	assert.InEpsilon(t, g.MaxAllocated, allocated, 0.10)
}
