package suggest

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/plan"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// Every kept candidate, written as --out writes a layout and read back as
// mimoplan validate reads a file, is valid, with the sizes the search
// chose.
func TestEveryCandidateWrittenValidates(t *testing.T) {
	for name, top := range map[string]int{"vlm-16gpu": 0, "three-8gpu": 100} {
		path := "../../testdata/suggest/" + name + ".yaml"
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		spec, d := layout.ParseSpec(path, data)
		require.Empty(t, d.Items)
		res, err := plan.Search(&plan.Request{Spec: spec, Est: plan.Model{}, HW: steptime.GPUs["H100"], GPUMemory: float64(spec.GPUMemory), Top: top})
		require.NoError(t, err)
		require.NotEmpty(t, res.Candidates, name)
		for i := range res.Candidates {
			c := &res.Candidates[i]
			var out bytes.Buffer
			require.NoError(t, WriteLayout(&out, data, c))
			l, d := layout.Parse("out.yaml", out.Bytes())
			r := validate.Check(l, d)
			errs, _ := r.Diags.Count()
			require.Zero(t, errs, "%s #%d:\n%s\n%v", name, i, out.String(), r.Diags.Items)
			for j, m := range l.Modules {
				want := c.Modules[j]
				assert.Equal(t, []int{want.RankOffset, want.NumRanks, want.TP, want.CP, want.PP, max(want.VPP, 1), want.EP, want.ExptTP},
					[]int{m.RankOffset, m.NumRanks, m.TP, m.CP, m.PP, max(m.VPP, 1), m.EP, m.ExptTP}, "%s #%d %s", name, i, m.Name)
			}
		}
	}
}
