package steptime

import "github.com/mimoplan/mimoplan/internal/layout"

// Job is what every module's time shares: the step's samples, the batch
// semantics of the target and the nodes.
type Job struct {
	GPUsPerNode int // 0: one node
	Samples     int // samples per global batch
	MicroBatch  int // micro_batch_size
	// Bridge: micro_batch_size is global (megatron-bridge), not per data
	// lane.
	Bridge bool
}

// JobOf is the job of a spec: global_batch_size samples (without it,
// world_size x micro_batch_size), micro-batches of micro_batch_size (1
// without a batch).
func JobOf(spec *layout.Layout) Job {
	j := Job{MicroBatch: 1, Samples: spec.WorldSize}
	if spec.Cluster != nil && spec.Cluster.Nodes > 1 {
		j.GPUsPerNode = spec.Cluster.GPUsPerNode
	}
	if b := spec.Batch; b != nil {
		j.MicroBatch = b.MicroBatchSize
		j.Samples = spec.WorldSize * b.MicroBatchSize
		if b.GlobalBatchSize > 0 {
			j.Samples = b.GlobalBatchSize
		}
	}
	j.Bridge = spec.Target == layout.TargetMegatronBridge
	return j
}

// Microbatches is the number of micro-batches each pipeline sees per
// global batch; lanes is the language module's dp*gtp_remat. It does not
// grow with lanes, so Microbatches(1) is the most any split gives.
func (j Job) Microbatches(lanes int) int {
	step := j.MicroBatch
	if !j.Bridge {
		step *= lanes
	}
	return max(1, j.Samples/max(1, step))
}
