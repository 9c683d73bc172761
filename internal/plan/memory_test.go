package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// A layout suggest keeps fits by validate's own figure, model.Total (the
// one function gpu-memory-short judges with): every candidate's memory is
// that figure, at most the GPU's memory, and Model.Memory's pruning bound
// never exceeds it.
func TestCandidatesFitByValidatesTotal(t *testing.T) {
	checked := 0
	for _, tc := range bruteCases {
		if !tc.model || (testing.Short() && tc.slow) {
			continue
		}
		spec, d := layout.ParseSpec("spec.yaml", []byte(tc.spec))
		require.Empty(t, d.Items, tc.name)
		require.Positive(t, spec.GPUMemory, tc.name)
		res, err := Search(&Request{Spec: spec, Est: Model{}, HW: steptime.GPUs["H100"], GPUMemory: float64(spec.GPUMemory)})
		require.NoError(t, err)
		require.NotEmpty(t, res.Candidates, tc.name)
		for _, c := range res.Candidates {
			v := validate.Check(rawLayout(spec, c.Modules), &diag.List{File: "raw"})
			for _, x := range v.Diags.Items {
				assert.NotEqual(t, string(diag.RuleGPUMemoryShort), x.Rule, "%s: %s", tc.name, key(c.Modules))
			}
			for _, e := range v.Estimates {
				lm := &v.Layout.Modules[e.Index]
				whole := model.Total(lm.Model.Config, e.Parallel, e.Training)
				got := c.Score.Modules[e.Index].MemoryBytes
				assert.Equal(t, whole.TotalBytes(), got, "%s %s: the candidate's memory is model.Total", tc.name, e.Name)
				assert.LessOrEqual(t, got, float64(spec.GPUMemory), "%s %s fits", tc.name, e.Name)
				ch := c.Modules[e.Index]
				ch.DP = e.Parallel.DP
				bound, _, ok := Model{}.Memory(spec, &spec.Modules[e.Index], &ch)
				require.True(t, ok)
				assert.LessOrEqual(t, bound, got*(1+1e-12), "%s %s: the search's bound is a lower bound", tc.name, e.Name)
				checked++
			}
		}
	}
	require.Positive(t, checked)
}
