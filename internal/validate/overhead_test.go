package validate_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/model"
)

// gpu-memory-short judges with the measured overheads: a GPU that holds
// Megatron's figure and mimoplan's terms but not the CUDA context and the
// allocator's slack is short.
func TestGPUMemoryShortCountsOverheads(t *testing.T) {
	layoutWith := func(gpuMemory string) string {
		return fmt.Sprintf(`version: 1
cluster: {nodes: 1, gpus_per_node: 8%s}
modules:
  - name: language
    num_ranks: 8
    tp: 8
    model: {preset: llama3-8b}
`, gpuMemory)
	}
	r := checkModel(t, layoutWith(""))
	require.Empty(t, r.Diags.Items)
	require.Len(t, r.Estimates, 1)
	e := r.Estimates[0].Estimate
	var names []string
	for _, term := range e.Terms {
		if term.Part == model.PartOverhead {
			names = append(names, term.Name)
		}
	}
	// tp 8: one communicator with peers.
	assert.ElementsMatch(t, []string{model.TermCUDAContext, model.TermAllocatorSlack, model.TermNCCLBuffers}, names)
	// One function gives the figure gpu-memory-short and suggest judge with.
	me := r.Estimates[0]
	want := model.Total(r.Layout.Modules[me.Index].Model.Config, me.Parallel, me.Training)
	assert.Equal(t, want.TotalBytes(), e.TotalBytes())
	assert.Greater(t, e.OverheadBytes(), float64(model.CUDAContextBytes))

	const mib = 1 << 20
	withoutOverheads := e.TotalBytes() - e.OverheadBytes()
	between := int64(withoutOverheads+e.TotalBytes()) / 2 / mib
	r = checkModel(t, layoutWith(fmt.Sprintf(", gpu_memory: %dMiB", between)))
	require.Len(t, r.Diags.Items, 1)
	assert.Equal(t, "gpu-memory-short", r.Diags.Items[0].Rule)
	assert.Contains(t, r.Diags.Items[0].Message, "CUDA context, NCCL and allocator")

	r = checkModel(t, layoutWith(fmt.Sprintf(", gpu_memory: %dMiB", int64(e.TotalBytes())/mib+1)))
	assert.Empty(t, r.Diags.Items)
}
