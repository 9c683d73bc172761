package validate_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// device-connections fires only on a value the layout states: other than
// 1 beside tensor parallelism (in any module), 1 beside the MoE all-to-all
// overlap; at the variable's place.
func TestDeviceConnections(t *testing.T) {
	for _, c := range []struct {
		env, training string
		vision, tp    int
		want          string // the message's start; "" for none
	}{
		{"{CUDA_DEVICE_MAX_CONNECTIONS: 8}", "{}", 1, 2, "CUDA_DEVICE_MAX_CONNECTIONS is 8 with tensor parallelism"},
		{"{CUDA_DEVICE_MAX_CONNECTIONS: 32}", "{}", 2, 1, "CUDA_DEVICE_MAX_CONNECTIONS is 32 with tensor parallelism"},
		{"{CUDA_DEVICE_MAX_CONNECTIONS: 1}", "{}", 1, 2, ""},
		{"{CUDA_DEVICE_MAX_CONNECTIONS: 8}", "{}", 1, 1, ""},
		{"{PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True}", "{}", 1, 2, ""},
		{"{CUDA_DEVICE_MAX_CONNECTIONS: 1}", "{overlap_moe_expert_parallel_comm: true}", 1, 1, "CUDA_DEVICE_MAX_CONNECTIONS is 1 with overlap_moe_expert_parallel_comm"},
		{"{CUDA_DEVICE_MAX_CONNECTIONS: 32}", "{overlap_moe_expert_parallel_comm: true}", 1, 2, ""},
	} {
		text := fmt.Sprintf("version: 1\nworld_size: 8\nenv: %s\ntraining: %s\nmodules:\n"+
			"  - {name: vision, num_ranks: 4, tp: %d}\n  - {name: language, num_ranks: 4, rank_offset: 4, tp: %d}\n", c.env, c.training, c.vision, c.tp)
		l, d := layout.Parse("t.yaml", []byte(text))
		res := validate.Check(l, d)
		var got []diag.Diagnostic
		for _, it := range res.Diags.Items {
			if it.Rule == string(diag.RuleDeviceConnections) {
				got = append(got, it)
			}
		}
		if c.want == "" {
			assert.Empty(t, got, c.env+" "+c.training)
			continue
		}
		if assert.Len(t, got, 1, c.env+" "+c.training) {
			assert.Contains(t, got[0].Message, c.want)
			assert.Equal(t, [2]int{3, 36}, [2]int{got[0].Line, got[0].Column}, "at the value")
			assert.Equal(t, diag.Warning, got[0].Severity)
		}
	}
}
