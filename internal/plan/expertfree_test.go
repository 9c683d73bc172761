package plan

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// TestExpertFree holds Model.ExpertFree to what the search assumes of it
// (candidate.go): on every preset it calls expert-free, the expert sizes
// change neither Memory nor Accepts nor the step-time model.
func TestExpertFree(t *testing.T) {
	spec, d := layout.ParseSpec("spec.yaml", []byte("version: 1\nworld_size: 64\nbatch: {micro_batch_size: 2, global_batch_size: 64}\n"+
		"training: {use_distributed_optimizer: true, sequence_parallel: true, recompute_granularity: selective}\nmodules:\n  - {name: language}\n"))
	require.Empty(t, d.Items)
	r := rand.New(rand.NewPCG(3, 4))
	sizes := []int{1, 2, 4, 8}
	pick := func() int { return sizes[r.IntN(len(sizes))] }
	est, free := Model{}, 0
	for _, p := range model.Presets() {
		m := &layout.Module{Name: "language", Model: &layout.Model{Config: p.Config}}
		if !est.ExpertFree(spec, m) {
			assert.Positive(t, p.Config.Resolve().NumExperts, p.Name)
			continue
		}
		free++
		shape := est.Shape(spec, m)
		j := steptime.New(steptime.GPUs["H100"], steptime.Job{GPUsPerNode: 8, Samples: 64, MicroBatch: 2})
		for range 50 {
			c := Choice{Name: "language", RankOffset: 8 * r.IntN(4), NumRanks: 64, Sizes: Sizes{TP: pick(), CP: pick(), PP: pick(), GTPRemat: 1, EP: 1}}
			c.DP = max(1, 64/(c.TP*c.CP*c.PP))
			alt := c
			alt.ExptTP, alt.ExptGTPRemat = pick(), pick()
			c.ExptTP, c.ExptGTPRemat = 1, 1
			b1, p1, ok1 := est.Memory(spec, m, &c)
			b2, p2, ok2 := est.Memory(spec, m, &alt)
			assert.Equal(t, []any{b1, p1, ok1}, []any{b2, p2, ok2}, "%s memory %+v %+v", p.Name, c.Sizes, alt.Sizes)
			assert.Equal(t, est.Accepts(spec, m, &c), est.Accepts(spec, m, &alt), "%s accepts", p.Name)
			m1, m2 := stepModule(&c, 4, p1), stepModule(&alt, 4, p2)
			assert.Equal(t, j.Time(&shape, m1), j.Time(&shape, m2), "%s time", p.Name)
		}
	}
	assert.Positive(t, free, "some preset has no experts")
}
