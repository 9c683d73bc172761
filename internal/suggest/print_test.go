package suggest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/plan"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// Print's json, written a candidate at a time, is byte for byte what
// encoding/json writes for the whole result, with and without candidates.
func TestPrintJSONIsEncodingJSON(t *testing.T) {
	for _, src := range []string{
		"version: 1\ncluster: {nodes: 2, gpus_per_node: 4, gpu_memory: 80GiB}\nbatch: {micro_batch_size: 1, global_batch_size: 32}\nmodules:\n" +
			"  - {name: vision, model: {preset: clip-vit-l-14-336}}\n  - {name: language, model: {preset: llama3-8b, num_layers: 8}}\n",
		"version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu_memory: 20GiB}\nmodules:\n  - {name: language, model: {preset: llama3-70b}}\n", // nothing fits: misses
	} {
		spec, d := layout.ParseSpec("s.yaml", []byte(src))
		require.Empty(t, d.Items)
		res, err := plan.Search(&plan.Request{Spec: spec, Est: plan.Model{}, HW: steptime.GPUs["H100"],
			GPUMemory: float64(spec.GPUMemory)})
		require.NoError(t, err)
		require.Equal(t, len(spec.Modules) == 1, len(res.Candidates) == 0, "candidates on two modules, misses on one")
		var got, want bytes.Buffer
		require.NoError(t, Print(&got, "json", res))
		require.NoError(t, json.NewEncoder(&want).Encode(res))
		require.Equal(t, want.String(), got.String())
	}
}
