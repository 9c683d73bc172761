package validate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// llm-only-not-whole-world mirrors --llm-only's own check. The core rules
// (span-out-of-world, world-gap) catch a lone module that misses the world
// first, so the rule is reached here by running it on a topology directly.
func TestLLMOnlyNotWholeWorld(t *testing.T) {
	for _, tt := range []struct {
		name  string
		world int
		want  []string
	}{
		{"covers the world", 8, nil},
		{"misses ranks", 16, []string{"llm-only-not-whole-world"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, d := layout.Parse("llm.yaml", []byte("version: 1\ntarget: megatron-lm\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 8, tp: 2}\n"))
			r := Check(l, d)
			require.NotNil(t, r.Topology)
			require.Empty(t, r.Diags.Items)
			r.Topology.WorldSize = tt.world
			c := &checker{l: l, d: d, r: r, sized: r.Topology.Modules}
			c.megatronLMPlacement()
			var got []string
			for _, x := range d.Items {
				got = append(got, x.Rule)
				assert.Equal(t, 5, x.Line)
				assert.Equal(t, 31, x.Column, "at num_ranks")
				assert.Equal(t, "language", x.Module)
				assert.Contains(t, x.Hint, "num_ranks to 16")
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// The rules after the core ones read sizes, never groups, so their cost
// follows the number of modules, not of ranks: 10,000 colocated modules of
// 2^24 ranks each (a 600 KB layout; 1.7e11 ranks in all), with every rule
// family active, in well under a second. The topology here has no grids:
// building those is internal/grid's cost, not the rules'.
func TestTopologyRulesCostFollowsModules(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\ntarget: megatron-bridge\ncluster: {nodes: 2097152, gpus_per_node: 8}\nbatch: {micro_batch_size: 6, global_batch_size: 36}\nmodules:\n")
	b.WriteString("- {name: language, num_ranks: 16777216, tp: 3, cp: 2, expt_tp: 3}\n")
	for i := range 9999 {
		fmt.Fprintf(&b, "- {name: m%d, num_ranks: 16777216, rank_offset: 0, tp: %d, cp: %d, pp: 2}\n", i, 1<<(i%8), 1<<(i%5))
	}
	l, d := layout.Parse("big.yaml", []byte(b.String()))
	require.Empty(t, d.Items)
	topo := &Topology{Target: l.Target, WorldSize: l.WorldSize, Mode: Colocated, Cluster: l.Cluster, Batch: l.Batch}
	for _, m := range l.Modules {
		dense, expert := m.TP*m.GTPRemat*m.CP*m.PP, m.ExptTP*m.EP*m.ExptGTPRemat*m.PP
		topo.Modules = append(topo.Modules, &grid.Module{
			Spec: grid.Spec{Name: m.Name, RankOffset: m.RankOffset, NumRanks: m.NumRanks, TP: m.TP, GTPRemat: m.GTPRemat,
				CP: m.CP, PP: m.PP, EP: m.EP, ExptTP: m.ExptTP, ExptGTPRemat: m.ExptGTPRemat},
			DP: m.NumRanks / dense, ExptDP: m.NumRanks / expert,
		})
	}
	r := &Result{Layout: l, Diags: d, Mode: Colocated, Topology: topo}
	c := &checker{l: l, d: d, r: r, sized: topo.Modules}
	took := time.Hour
	for range 3 { // the fastest of a few runs, robust to a busy machine
		d.Items = nil
		start := time.Now()
		for _, s := range stages {
			s.run(c)
		}
		took = min(took, time.Since(start))
	}
	rules := map[string]int{}
	for _, x := range d.Items {
		rules[x.Rule]++
	}
	// Each family fired, and none floods: at most a few per module.
	for _, want := range []string{"colocated-pp-cp-unsupported", "micro-batch-not-divisible", "colocated-unsupported", "tp-not-power-of-two", "group-crosses-node"} {
		assert.Positive(t, rules[want], want)
	}
	assert.LessOrEqual(t, len(d.Items), 6*len(l.Modules))
	assert.Less(t, took, 500*time.Millisecond)
	t.Logf("%d diagnostics in %v", len(d.Items), took)
}
