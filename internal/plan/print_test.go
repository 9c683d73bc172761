package plan

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// Print's json, written a candidate at a time, is byte for byte what
// encoding/json writes for the whole result, with and without candidates.
func TestPrintJSONIsEncodingJSON(t *testing.T) {
	for _, src := range []string{
		"version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nbatch: {micro_batch_size: 1, global_batch_size: 32}\nmodules:\n  - name: vision\n  - name: language\n    num_experts: 4\n",
		"version: 1\nworld_size: 4\nmodules:\n  - name: language\n", // nothing fits: misses
	} {
		spec, d := layout.ParseSpec("s.yaml", []byte(src))
		require.Empty(t, d.Items)
		res, err := Search(&Request{Spec: spec, Est: toyEstimator{weights: 8e9}, HW: steptime.GPUs["H100"], GPUMemory: 6e9})
		if len(spec.Modules) == 1 {
			res, err = Search(&Request{Spec: spec, Est: toyEstimator{weights: 200e9}, HW: steptime.GPUs["H100"], GPUMemory: 8e9, Top: 5})
		}
		require.NoError(t, err)
		var got, want bytes.Buffer
		require.NoError(t, Print(&got, "json", res))
		require.NoError(t, json.NewEncoder(&want).Encode(res))
		require.Equal(t, want.String(), got.String())
	}
}
