package validate

import (
	"fmt"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/model"
)

// p2pOverlap reports, on target megatron-lm, the language module's
// virtual pipeline at pp below 3 with overlap_p2p_comm false: Megatron-LM's
// validate_args then batches each step's sends and receives
// (batch_p2p_comm = not overlap_p2p_comm, argument_utils.py:307), and with
// two stages the previous and next rank are one peer, so it asserts pp > 2
// (arguments.py:1004-1008 at d98e8a6; with the overlap pp > 1 is enough,
// :1001-1003, vpp-needs-pp's; at pp 1 both report). It runs on the
// arguments the example writes for the language module alone (--llm-pp
// and its virtual pipeline), so an encoder is not checked. Megatron-core's
// ModelParallelConfig and Megatron-Bridge check none of this (targets
// core, megatron-bridge). testdata/p2p-overlap-megatron.json
// (scripts/gen-p2p-overlap-fixtures.py) holds upstream's verdicts.
func (c *checker) p2pOverlap() {
	if c.l.Training == nil || !c.l.Training.NoOverlapP2PComm {
		return
	}
	for i, m := range c.sized {
		if m == nil || m.Name != grid.LanguageModule {
			continue
		}
		lm := c.lm(i)
		// pp 1 included; a layout whose stages pp does not divide fails
		// before (arguments.py:945, pipeline-layout-invalid).
		vpp, exact := model.VirtualPipeline(lm.VPP, m.PP, lm.Split.Layout)
		if !exact || !needsPP3(m.PP, vpp) {
			continue
		}
		drop := "vpp 1"
		if lm.Split.Layout != "" {
			drop = fmt.Sprintf("a pipeline_model_parallel_layout of %d stages", m.PP)
		}
		c.d.Add(diag.RuleVPPNeedsPPWithoutP2POverlap, c.l.Pos("training.overlap_p2p_comm"), m.Name,
			fmt.Sprintf("set overlap_p2p_comm: true (Megatron's default), use pp 3 or more, or drop the virtual pipeline (%s)", drop),
			"overlap_p2p_comm is false and the language module runs the interleaved schedule (pp %d, vpp %d): Megatron-LM's validate_args asserts pp > 2 then, so that no batch of pipeline sends holds two sends and receives between the same two ranks (megatron/training/arguments.py:1004-1008 at d98e8a6)",
			m.PP, vpp)
	}
}

// needsPP3 is arguments.py:1004's verdict without the overlap: a virtual
// pipeline (vpp > 1) at pp below 3.
func needsPP3(pp, vpp int) bool { return vpp > 1 && pp < 3 }
