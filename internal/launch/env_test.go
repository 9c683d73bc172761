package launch

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const withEnv = threeModule + `env:
  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True
  CUDA_DEVICE_MAX_CONNECTIONS: 1
`

// TestLayoutEnv: every plan sets the layout's env block after its own
// variables and before --env, which may repeat a value but not change it;
// the topology carries the block, in its order.
func TestLayoutEnv(t *testing.T) {
	p := build(t, withEnv, Options{Hosts: hosts4, Program: []string{"train.py"},
		Env: []EnvVar{{"NCCL_DEBUG", "INFO"}, {"CUDA_DEVICE_MAX_CONNECTIONS", "1"}}})
	assert.Equal(t, []EnvVar{
		{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
		{"OMP_NUM_THREADS", "1"},
		{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"},
		{"CUDA_DEVICE_MAX_CONNECTIONS", "1"},
		{"NCCL_DEBUG", "INFO"},
	}, p.Env)
	assert.Contains(t, string(p.Topology), `"mode":"non_colocated","env":{"PYTORCH_CUDA_ALLOC_CONF":"expandable_segments:True","CUDA_DEVICE_MAX_CONNECTIONS":"1"},"modules":[`)
	assert.NotContains(t, string(build(t, threeModule, Options{Hosts: hosts4, Program: []string{"train.py"}}).Topology), `"env"`)
	// The layout may set what the plan defaults, once, in its place.
	p = build(t, threeModule+"env: {OMP_NUM_THREADS: 8}\n", Options{Hosts: hosts4, Program: []string{"train.py"}})
	assert.Equal(t, []EnvVar{{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"OMP_NUM_THREADS", "8"}}, p.Env)
}

// Each --env that changes a variable of the layout's env block, and each
// variable of it that torchrun or the plan sets, is an error at the
// layout's line, every one reported; no plan is written.
func TestLayoutEnvRefused(t *testing.T) {
	for _, tc := range []struct {
		src  string
		env  []EnvVar
		want []string
	}{
		{withEnv, []EnvVar{{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:False"}, {"CUDA_DEVICE_MAX_CONNECTIONS", "32"}},
			[]string{
				`15:28 env-conflict --env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False, but the layout's env.PYTORCH_CUDA_ALLOC_CONF is "expandable_segments:True": the job would not run the environment mimoplan checked`,
				`16:32 env-conflict --env CUDA_DEVICE_MAX_CONNECTIONS=32, but the layout's env.CUDA_DEVICE_MAX_CONNECTIONS is "1": the job would not run the environment mimoplan checked`,
			}},
		{threeModule + "env: {RANK: 0, NODE_RANK: 1, OK: 2, MIMO_LLM_TP: 2, MIMOPLAN_TOPOLOGY: t.json}\n", nil,
			[]string{
				`14:13 invalid-value env.RANK is set by torchrun for every worker: a layout cannot set it`,
				`14:27 invalid-value env.NODE_RANK is the launch plans' own variable: a layout cannot set it`,
				`14:50 invalid-value env.MIMO_LLM_TP is what the plan derives from the layout's own modules (the topology, Megatron-Bridge's MIMO_* grid): a layout cannot set it apart`,
				`14:72 invalid-value env.MIMOPLAN_TOPOLOGY is what the plan derives from the layout's own modules (the topology, Megatron-Bridge's MIMO_* grid): a layout cannot set it apart`,
			}},
	} {
		p, d, err := Build(check(t, tc.src), Options{Hosts: hosts4, Program: []string{"train.py"}, MasterPort: DefaultMasterPort, Env: tc.env})
		require.NoError(t, err)
		assert.Nil(t, p)
		var got []string
		for _, it := range d.Items {
			got = append(got, fmt.Sprintf("%d:%d %s %s", it.Line, it.Column, it.Rule, it.Message))
		}
		assert.Equal(t, tc.want, got)
		assert.True(t, d.HasErrors())
	}
}
