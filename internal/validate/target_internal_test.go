package validate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/topo"
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
			l, d := layout.Parse("llm.yaml", []byte("version: 1\ntarget: megatron-lm\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 8, tp: 2}\ntraining: {use_distributed_optimizer: true}\n"))
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
// family active. The work is counted, not timed (a timing fails on a busy
// machine and under -race): the heap allocations of one run of the rules
// are the same for 2^20 ranks a module as for 2^24, and double with the
// modules. (Their time is BenchmarkTopologyRules'.) The topology here has no grids: building those is
// internal/grid's cost, not the rules'.
func TestTopologyRulesCostFollowsModules(t *testing.T) {
	big, items := topologyRulesWork(t, 10000, 1<<24)
	rules := map[string]int{}
	for _, x := range items {
		rules[x.Rule]++
	}
	// Each family fired, and none floods: at most a few per module.
	for _, want := range []string{"colocated-pp-cp-unsupported", "micro-batch-not-divisible", "colocated-unsupported", "tp-not-power-of-two", "group-crosses-node"} {
		assert.Positive(t, rules[want], want)
	}
	assert.LessOrEqual(t, len(items), 6*10000)

	fewerRanks, _ := topologyRulesWork(t, 10000, 1<<20)
	half, _ := topologyRulesWork(t, 5000, 1<<24)
	// The same to within the digits of the numbers in the messages.
	assert.InEpsilon(t, fewerRanks, big, 0.01, "16 times the ranks, the same work")
	assert.InDelta(t, 2, big/half, 0.1, "twice the modules, twice the work")
	t.Logf("%d diagnostics; %.0f allocations for 10,000 modules (%.0f for 5,000)", len(items), big, half)
}

// topologyRulesWork runs the rules after the core ones over n colocated
// modules of ranks ranks each and returns the heap allocations of one run
// and its diagnostics.
func topologyRulesWork(t *testing.T, n, ranks int) (float64, []diag.Diagnostic) {
	t.Helper()
	c := topologyRulesChecker(t, n, ranks)
	allocs := testing.AllocsPerRun(1, c.runStages)
	return allocs, c.d.Items
}

func BenchmarkTopologyRules(b *testing.B) {
	c := topologyRulesChecker(b, 10000, 1<<24)
	b.ResetTimer()
	for b.Loop() {
		c.runStages()
	}
}

func (c *checker) runStages() {
	c.d.Items = nil
	for _, s := range stages() {
		s.run(c)
	}
}

// topologyRulesChecker is a checker over n colocated modules of ranks ranks
// each, with sizes but no grids, every rule family active.
func topologyRulesChecker(tb testing.TB, n, ranks int) *checker {
	tb.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\ntarget: megatron-bridge\ncluster: {nodes: %d, gpus_per_node: 8}\nbatch: {micro_batch_size: 6, global_batch_size: 36}\nmodules:\n", ranks/8)
	fmt.Fprintf(&b, "- {name: language, num_ranks: %d, tp: 3, cp: 2, expt_tp: 3}\n", ranks)
	for i := range n - 1 {
		fmt.Fprintf(&b, "- {name: m%d, num_ranks: %d, rank_offset: 0, tp: %d, cp: %d, pp: 2}\n", i, ranks, 1<<(i%8), 1<<(i%5))
	}
	l, d := layout.Parse("big.yaml", []byte(b.String()))
	require.Empty(tb, d.Items)
	t := &topo.Topology{Target: l.Target, WorldSize: l.WorldSize, Mode: topo.Colocated, Cluster: l.Cluster, Batch: l.Batch, Layout: l}
	for _, m := range l.Modules {
		dense, expert := m.TP*m.GTPRemat*m.CP*m.PP, m.ExptTP*m.EP*m.ExptGTPRemat*m.PP
		t.Modules = append(t.Modules, &grid.Module{
			Spec: grid.Spec{Name: m.Name, RankOffset: m.RankOffset, NumRanks: m.NumRanks, TP: m.TP, GTPRemat: m.GTPRemat,
				CP: m.CP, PP: m.PP, EP: m.EP, ExptTP: m.ExptTP, ExptGTPRemat: m.ExptGTPRemat},
			DP: m.NumRanks / dense, ExptDP: m.NumRanks / expert,
		})
	}
	r := &Result{Layout: l, Diags: d, Topology: t}
	return &checker{l: l, d: d, r: r, sized: t.Modules, mode: topo.Colocated}
}
