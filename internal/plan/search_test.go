package plan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// The score bound never drops a candidate that belongs in the top K: the
// top K have the K least step times of the whole kept set (which of
// several tied candidates fill the last places is the search's choice),
// and each of them is in the kept set.
func TestTopIsHeadOfAll(t *testing.T) {
	req := moeRequest(t)
	all, err := Search(req)
	require.NoError(t, err)
	require.Greater(t, len(all.Candidates), 10)
	for _, k := range []int{1, 3, 10} {
		req.Top = k
		top, err := Search(req)
		require.NoError(t, err)
		require.Len(t, top.Candidates, k)
		in := map[string]bool{}
		for _, c := range all.Candidates {
			in[key(c.Modules)] = true
		}
		for i := range top.Candidates {
			assert.Equal(t, all.Candidates[i].Score.StepSeconds, top.Candidates[i].Score.StepSeconds, "top %d, #%d", k, i)
			assert.True(t, in[key(top.Candidates[i].Modules)], "top %d, #%d is valid", k, i)
		}
		assert.Less(t, top.Checked, all.Checked, "the bound saves validations")
	}
	for i := 1; i < len(all.Candidates); i++ {
		assert.False(t, less(&all.Candidates[i], &all.Candidates[i-1]), "sorted")
	}
}

// Nothing fits: the closest misses say what blocks each.
func TestNothingFitsGivesMisses(t *testing.T) {
	src := "version: 1\nworld_size: 4\nmodules:\n  - name: language\n"
	spec, d := layout.ParseSpec("s.yaml", []byte(src))
	require.Empty(t, d.Items)
	res, err := Search(&Request{Spec: spec, Est: toyEstimator{weights: 200e9}, HW: steptime.GPUs["H100"], GPUMemory: 8e9, Top: 5})
	require.NoError(t, err)
	assert.Empty(t, res.Candidates)
	require.NotEmpty(t, res.Misses)
	assert.Contains(t, res.Misses[0].Blocks[0], "more than gpu_memory")
	// The closest miss is the smallest excess: the most sharded one.
	assert.Equal(t, 16, res.Misses[0].Modules[0].TP*res.Misses[0].Modules[0].PP*res.Misses[0].Modules[0].EP)
}

// --all past its limit stops with an error that says what to do, rather
// than hold every candidate until memory runs out.
func TestAllLimit(t *testing.T) {
	req := moeRequest(t)
	all, err := Search(req)
	require.NoError(t, err)
	n := len(all.Candidates)
	require.Greater(t, n, 10)
	req.Limit = n
	_, err = Search(req)
	require.NoError(t, err, "exactly the limit is fine")
	req.Limit = n - 1
	_, err = Search(req)
	require.ErrorContains(t, err, fmt.Sprintf("more than %d valid layouts", n-1))
	require.ErrorContains(t, err, "--top K")
	req.Top = 5 // --top keeps K, whatever the limit
	res, err := Search(req)
	require.NoError(t, err)
	assert.Len(t, res.Candidates, 5)
}

// moeRequest is --all on a vision encoder and an MoE language module on 8
// GPUs, with the toy estimator: many candidates, some refused by memory.
func moeRequest(t *testing.T) *Request {
	t.Helper()
	src := "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nbatch: {micro_batch_size: 1, global_batch_size: 32}\nmodules:\n" +
		"  - name: vision\n  - name: language\n    num_experts: 4\n"
	spec, d := layout.ParseSpec("s.yaml", []byte(src))
	require.Empty(t, d.Items)
	return &Request{Spec: spec, Est: toyEstimator{weights: 8e9}, HW: steptime.GPUs["H100"], GPUMemory: 6e9}
}

// TestMaxNodes: the search stops within MaxNodes, keeps the best found so
// far and says so; under the limit it is the whole search.
func TestMaxNodes(t *testing.T) {
	src := "version: 1\ncluster: {nodes: 4, gpus_per_node: 8}\nmodules: [{name: vision}, {name: audio}, {name: language}]\n"
	spec, d := layout.ParseSpec("s.yaml", []byte(src))
	require.Empty(t, d.Items)
	for _, limit := range []int{1, 1000, 100_000} {
		res, err := Search(&Request{Spec: spec, Est: Model{}, HW: steptime.GPUs["H100"], Top: 1, MaxNodes: limit})
		require.NoError(t, err)
		assert.True(t, res.Stopped, "limit %d", limit)
		assert.LessOrEqual(t, res.Nodes, limit+judgeNodes, "limit %d", limit)
		if limit > 1 {
			assert.Len(t, res.Candidates, 1, "the best found so far")
		}
	}
	req := moeRequest(t)
	req.Top = 5
	res, err := Search(req)
	require.NoError(t, err)
	assert.False(t, res.Stopped)
	req.MaxNodes = res.Nodes
	again, err := Search(req)
	require.NoError(t, err)
	assert.True(t, again.Stopped, "exactly the nodes the search needs")
	assert.Equal(t, res.Candidates, again.Candidates)
}
