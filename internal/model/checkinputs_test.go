package model

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCheckInputs: Check gives the same verdicts on p and on
// CheckInputs(p), and Rules names Check's rules, for every preset (dense
// and MoE) and random sizes, with and without sequence parallelism.
func TestCheckInputs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 2, 3, 4, 5, 6, 8, 12, 16, 64}
	pick := func() int { return sizes[r.IntN(len(sizes))] }
	for _, pr := range Presets() {
		for range 400 {
			p := Parallel{NumRanks: pick(), TP: pick(), GTPRemat: pick(), CP: pick(), PP: pick(), VPP: pick(),
				DP: pick(), EP: pick(), ExptTP: pick(), ExptGTPRemat: pick()}
			tr := Training{SequenceParallel: r.IntN(2) == 0, MicroBatchSize: 1 + r.IntN(4)}
			q := CheckInputs(pr.Config, p)
			vs := Check(pr.Config, p, tr)
			assert.Equal(t, vs, Check(pr.Config, q, tr), "%s %+v", pr.Name, p)
			var ids []string
			for _, v := range vs {
				ids = append(ids, v.Rule)
			}
			assert.Equal(t, ids, Rules(pr.Config, p, tr), "Rules: %s %+v", pr.Name, p)
		}
	}
}
