package validate

import (
	"github.com/mimoplan/mimoplan/internal/diag"
)

// deviceConnectionsVar is CUDA's limit on the hardware queues a process's
// streams share (CUDA's default is 8).
const deviceConnectionsVar = "CUDA_DEVICE_MAX_CONNECTIONS"

// deviceConnections checks CUDA_DEVICE_MAX_CONNECTIONS where the layout's
// env states it. Tensor parallelism wants one queue, so that each
// communication kernel is queued before the GEMM it overlaps: Megatron's
// linear layers warn otherwise, with sequence parallelism or tp's
// gradient all-reduce (megatron/core/tensor_parallel/layers.py:908-924 at
// d98e8a6), and Megatron-Bridge's performance scripts set it to 1 for tp or
// cp > 1 on Hopper "to schedule a communication kernel before the
// overlapping persistent GEMM kernel. Otherwise, communication kernel will
// be pushed to the end of the GEMM kernel, failing to overlap"
// (scripts/performance/perf_plugins.py:227-234 at bridge@7af9601c). The MoE
// all-to-all overlap wants more than one (Megatron-LM
// megatron/core/transformer/moe/README.md:437 at d98e8a6, "Requirements for
// EP A2A Overlap"), which the same scripts leave it at. Neither is an
// error: the job runs, slower.
func (c *checker) deviceConnections() {
	v, ok := c.l.EnvValue(deviceConnectionsVar)
	if !ok {
		return
	}
	pos := c.l.EnvPos(deviceConnectionsVar)
	a2a := c.l.Training != nil && c.l.Training.OverlapMoEExpertParallelComm
	switch {
	case v == "1" && a2a:
		c.d.Add(diag.RuleDeviceConnections, pos, "", "leave "+deviceConnectionsVar+" out (CUDA's default is 8) or set it above 1, as Megatron-Bridge's scripts do with the all-to-all overlap",
			"%s is 1 with overlap_moe_expert_parallel_comm: the MoE all-to-all overlap needs more than one (Megatron-LM megatron/core/transformer/moe/README.md:437)", deviceConnectionsVar)
	case v != "1" && c.anyTP() && !a2a:
		c.d.Add(diag.RuleDeviceConnections, pos, "", "set "+deviceConnectionsVar+": 1",
			"%s is %s with tensor parallelism: Megatron warns that tp's communication then need not run before the GEMMs it overlaps (megatron/core/tensor_parallel/layers.py:908-924)", deviceConnectionsVar, v)
	}
}

// anyTP reports whether a module runs tensor parallelism.
func (c *checker) anyTP() bool {
	for i := range c.l.Modules {
		if c.l.Modules[i].TP > 1 {
			return true
		}
	}
	return false
}
