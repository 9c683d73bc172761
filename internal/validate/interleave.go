package validate

import (
	"fmt"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// interleaveFault is the check of its micro-batches that Megatron-core's
// interleaved pipeline schedule fails at the first step, if any.
type interleaveFault int

const (
	interleaveOK interleaveFault = iota
	// The micro-batch group N is outside [pp, M] (schedules.py:1168).
	interleaveRange
	// The last group, M mod N, is short of pp (schedules.py:1180).
	interleaveRemainder
)

// interleaveCheck is forward_backward_pipelining_with_interleaving's check
// of m micro-batches run in groups of n (microbatch_group_size_per_vp_stage;
// 0: ModelParallelConfig's default, pp). No layout key sets n, so
// validate asks with 0; the fixture test asks with every n.
func interleaveCheck(pp, m, n int) interleaveFault {
	if n == 0 {
		n = pp
	}
	if n > m || n < pp {
		return interleaveRange
	}
	if r := m % n; r > 0 && r < pp {
		return interleaveRemainder
	}
	return interleaveOK
}

// interleaving: on target core a module with pp above 1 and a virtual
// pipeline runs Megatron-core's interleaved schedule
// (get_forward_backward_func picks it for any virtual pipeline size), whose
// first step checks the step's micro (micro-batches, each of step
// samples). Megatron-LM's and Megatron-Bridge's MIMO training run the
// non-interleaved schedule (a MultiModuleProcessGroupCollection;
// train_megatron_mimo.py), which checks none of this; mimo-vpp-unsupported
// refuses their virtual pipelines instead.
func (c *checker) interleaving(micro, step int) {
	if c.l.Target != layout.TargetCore {
		return
	}
	gbs := c.l.Batch.GlobalBatchSize
	for i, m := range c.sized {
		if m == nil {
			continue
		}
		lm := c.lm(i)
		vpp := layout.InterleavedVPP(lm, m.PP)
		if vpp == 0 {
			continue
		}
		key, drop := "vpp", "vpp 1"
		if lm.Split.Layout != "" {
			key, drop = "pipeline_model_parallel_layout", fmt.Sprintf("a pipeline_model_parallel_layout of %d stages", m.PP)
		}
		want := step * m.PP
		hint := fmt.Sprintf("make global_batch_size a multiple of %d (%d samples a micro-batch step x pp %d; %s), or drop the interleaving (%s)",
			want, step, m.PP, multiples(want, gbs), drop)
		what := fmt.Sprintf("the interleaved pipeline schedule (pp %d, vpp %d) runs a step's micro-batches in groups of pp = %d, and global_batch_size %d gives %d (%d / %d samples a micro-batch step)",
			m.PP, vpp, m.PP, gbs, micro, gbs, step)
		switch interleaveCheck(m.PP, micro, 0) {
		case interleaveRange:
			c.d.Add(diag.RuleInterleavedMicrobatches, c.modelPos(lm, key), lm.Name, hint,
				"%s, less than one group: Megatron raises at the first step", what)
		case interleaveRemainder:
			c.d.Add(diag.RuleInterleavedMicrobatches, c.modelPos(lm, key), lm.Name, hint,
				"%s, which leave a last group of %d: Megatron raises at the first step", what, micro%m.PP)
		}
	}
}
