package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// When the spec itself stops every candidate, suggest says so first, in
// words a user acts on, rather than listing misses that are not the cause.
func TestBlocker(t *testing.T) {
	const two = "cluster: {nodes: 1, gpus_per_node: 8}\nmodules:\n  - name: vision\n  - name: language\n"
	tests := []struct {
		name, spec, want string
	}{
		{"colocated for megatron-lm", "version: 1\ntarget: megatron-lm\ncolocated: true\ntraining: {use_distributed_optimizer: true}\n" + two,
			"the spec wants the modules colocated (colocated: true), which Megatron-LM's MIMO example cannot run (colocated-unsupported): set colocated: false, or target core"},
		{"colocated for megatron-bridge", "version: 1\ntarget: megatron-bridge\ncolocated: true\n" + two,
			"the spec wants the modules colocated (colocated: true), which Megatron-Bridge cannot run (colocated-unsupported): set colocated: false, or target core"},
		{"colocated for core", "version: 1\ntarget: core\ncolocated: true\n" + two, ""},
		{"no ranks left", "version: 1\ntarget: core\ncolocated: false\ncluster: {nodes: 1, gpus_per_node: 8}\nmodules:\n  - name: vision\n  - {name: language, num_ranks: 8}\n",
			"the modules need disjoint spans: no ranks are left for vision of the 8 (fixed num_ranks: language 8; every module needs at least one rank, a node with align: node)"},
		{"no ranks left, bridge", "version: 1\ntarget: megatron-bridge\ncluster: {nodes: 2, gpus_per_node: 8}\nmodules:\n  - {name: vision, align: node}\n  - {name: language, num_ranks: 12}\n",
			"Megatron-Bridge cannot run colocated modules, so they need disjoint spans: no ranks are left for vision of the 16 (fixed num_ranks: language 12; every module needs at least one rank, a node with align: node)"},
		{"ranks enough", "version: 1\ntarget: core\ncolocated: false\ncluster: {nodes: 1, gpus_per_node: 8}\nmodules:\n  - name: vision\n  - {name: language, num_ranks: 7}\n", ""},
		{"colocated with a fixed pp", "version: 1\ntarget: core\ncolocated: true\ncluster: {nodes: 1, gpus_per_node: 8}\nmodules:\n  - name: vision\n  - {name: language, pp: 2}\n",
			"the spec wants the modules colocated (colocated: true), where every module needs pp 1 (colocated-pp-cp-unsupported), but it fixes language pp 2: leave pp open, or set colocated: false"},
		{"colocated with pp 1 fixed", "version: 1\ntarget: core\ncolocated: true\ncluster: {nodes: 1, gpus_per_node: 8}\nmodules:\n  - {name: vision, pp: 1}\n  - {name: language, cp: 2}\n", ""},
		{"a fixed pp, placement open", "version: 1\ntarget: core\ncluster: {nodes: 1, gpus_per_node: 8}\nmodules:\n  - name: vision\n  - {name: language, pp: 2}\n", ""},
		{"one module", "version: 1\ntarget: megatron-lm\ncolocated: true\ncluster: {nodes: 1, gpus_per_node: 8}\nmodules:\n  - name: language\ntraining: {use_distributed_optimizer: true}\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, d := layout.ParseSpec("s.yaml", []byte(tt.spec))
			require.False(t, d.HasErrors(), "%v", d.Items)
			assert.Equal(t, tt.want, blocker(spec))
		})
	}
}

// A model rule that refuses every size is named as a miss, as validate
// words it (it was "the spec's constraints allow no placement at all").
func TestMissNamesModelRule(t *testing.T) {
	spec, d := layout.ParseSpec("s.yaml", []byte("version: 1\ntarget: core\ncluster: {nodes: 1, gpus_per_node: 8, gpu_memory: 80GiB}\n"+
		"modules:\n  - name: language\n    pp: 8\n    model: {preset: llama3.1-405b}\n"))
	require.False(t, d.HasErrors(), "%v", d.Items)
	res, err := Search(&Request{Spec: spec, Est: Model{}, HW: steptime.GPUs["H100"], GPUMemory: float64(spec.GPUMemory), Top: 5})
	require.NoError(t, err)
	require.Empty(t, res.Candidates)
	require.NotEmpty(t, res.Misses)
	assert.Contains(t, res.Misses[0].Blocks, "layers-not-divisible (language): num_layers (126) is not divisible by pp (8)")
}

// A colocated spec whose sizes rule out the global groups (vision's tp 2
// beside the language's tp 1 and cp 2) is blocked by
// colocated-pp-cp-unsupported alone, and the closest miss names it.
func TestMissNamesColocatedRule(t *testing.T) {
	spec, d := layout.ParseSpec("s.yaml", []byte("version: 1\ntarget: core\ncolocated: true\nworld_size: 8\n"+
		"modules:\n  - {name: vision, tp: 2}\n  - {name: language, tp: 1, cp: 2}\n"))
	require.False(t, d.HasErrors(), "%v", d.Items)
	res, err := Search(&Request{Spec: spec, Est: Model{}, HW: steptime.GPUs["H100"], Top: 5})
	require.NoError(t, err)
	require.Empty(t, res.Candidates)
	require.NotEmpty(t, res.Misses)
	assert.Empty(t, res.Reason)
	assert.Equal(t, []string{"colocated-pp-cp-unsupported (language): cp is 2, but these colocated modules do not share one set of groups, so they need a ColocatedBridgeCommunicator, which takes cp 1"},
		res.Misses[0].Blocks)
}

// A colocated spec that only the global groups can run (language cp 2, the
// encoder at cp 1 on the language's dp x cp ranks, as Megatron-LM's MIMO
// functional test) is found: the descent's colocated pruning
// (colocatedRefused) keeps what validate accepts.
func TestColocatedGlobalGroupsFound(t *testing.T) {
	spec, d := layout.ParseSpec("s.yaml", []byte("version: 1\ntarget: core\ncolocated: true\nworld_size: 8\n"+
		"modules:\n  - {name: vision, tp: 1, cp: 1}\n  - {name: language, tp: 1, cp: 2, pp: 1}\n"))
	require.False(t, d.HasErrors(), "%v", d.Items)
	res, err := Search(&Request{Spec: spec, Est: Model{}, HW: steptime.GPUs["H100"], Top: 5})
	require.NoError(t, err)
	require.NotEmpty(t, res.Candidates, "%v", res.Misses)
	var got []string
	for _, c := range res.Candidates {
		got = append(got, describe(c.Modules))
	}
	assert.Contains(t, got, "vision [0,8) tp1 cp1 pp1 dp8; language [0,8) tp1 cp2 pp1 dp4")
	for _, c := range res.Candidates {
		for _, m := range c.Modules {
			assert.Equal(t, 1, m.PP, describe(c.Modules))
		}
	}
}

func describe(cs []Choice) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s [%d,%d) tp%d cp%d pp%d dp%d", c.Name, c.RankOffset, c.RankOffset+c.NumRanks, c.TP, c.CP, c.PP, c.DP))
	}
	return strings.Join(parts, "; ")
}
