package plan

import (
	"fmt"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// DefaultHeadroom is the share of a GPU's memory suggest keeps free unless
// told (--headroom): the estimate's measured shortfall,
// model.ShortfallMargin (10%, 8 GiB of an 80 GiB GPU), so that a layout
// suggest offers fits wherever the estimate has been as right as it was on
// 95% of the runs measured on GPUs. It was 5%, which 23 of the 76 runs
// fell short of.
const DefaultHeadroom = model.ShortfallMargin

// Model answers the planner's questions with internal/model, the figures
// validate checks memory with.
type Model struct{}

// Shape is the model's size as the step-time model reads it
// (steptime.ShapeOf).
func (Model) Shape(spec *layout.Layout, m *layout.Module) steptime.Shape {
	return steptime.ShapeIn(spec, m)
}

// Memory is a lower bound of the total validate's gpu-memory-short
// compares with gpu_memory, from the module's own sizes: Megatron's
// activation memory grows with the micro-batch and with the micro-batches
// in flight (min(1, m/pp)), so the figure for the least micro-batch the
// module can get and one micro-batch in flight is at most validate's,
// whatever the other modules' sizes. Also the parameters on the most
// loaded GPU.
func (Model) Memory(spec *layout.Layout, m *layout.Module, c *Choice) (float64, float64, bool) {
	if m.Model == nil {
		return 0, 0, false
	}
	t := spec.ModelTraining(m, c.DP)
	t.NumMicrobatches = 1
	t.MicroBatchSize = validate.LeastMicroBatch(spec, m, c.DP)
	e := model.Total(m.Model.Config, parallel(m, c), t) // validate's figure, without the MIMO bridges
	return e.TotalBytes(), e.Megatron.ShardParameters, true
}

// Accepts runs the model's own rules (model.Check, which validate runs
// for every module with a model) on the sizes of c alone: an error there
// is an error of every layout holding them.
func (m Model) Accepts(spec *layout.Layout, mod *layout.Module, c *Choice) bool {
	return len(m.RefusedBy(spec, mod, c)) == 0
}

// Refusals are the model's rules that refuse c's sizes, as validate words
// them: "rule-id (module): message".
func (Model) Refusals(spec *layout.Layout, m *layout.Module, c *Choice) []string {
	if m.Model == nil {
		return nil
	}
	var out []string
	for _, v := range model.Check(m.Model.Config, parallel(m, c), spec.ModelTraining(m, c.DP)) {
		if diag.SeverityOf(diag.RuleID(v.Rule)) == diag.Error {
			out = append(out, fmt.Sprintf("%s (%s): %s", v.Rule, m.Name, v.Message))
		}
	}
	return out
}

// ExpertFree: a model without experts has no expert layer, so its expert
// sizes change neither its memory, nor its time, nor the model's rules
// (model.CheckInputs; TestExpertFree holds Memory to it).
func (Model) ExpertFree(_ *layout.Layout, m *layout.Module) bool {
	return m.Model != nil && m.Model.Config.Resolve().NumExperts == 0
}

// AcceptsKey is z with the sizes Accepts does not read set to 0
// (model.CheckInputs), so that the search asks once per distinct answer.
func (Model) AcceptsKey(m *layout.Module, z Sizes) Sizes {
	if m.Model == nil {
		return Sizes{}
	}
	p := model.CheckInputs(m.Model.Config, parallel(m, &Choice{Sizes: z}))
	return Sizes{TP: p.TP, GTPRemat: p.GTPRemat, CP: p.CP, PP: p.PP, VPP: p.VPP, DP: p.DP, EP: p.EP, ExptTP: p.ExptTP, ExptGTPRemat: p.ExptGTPRemat}
}

// parallel is c as validate hands it to the model, with module m's
// pipeline split: a vpp of 1 is none.
func parallel(m *layout.Module, c *Choice) model.Parallel {
	vpp := c.VPP
	if vpp == 1 {
		vpp = 0
	}
	return model.Parallel{NumRanks: c.NumRanks, TP: c.TP, GTPRemat: c.GTPRemat, CP: c.CP, PP: c.PP, VPP: vpp,
		DP: c.DP, EP: c.EP, ExptTP: c.ExptTP, ExptGTPRemat: c.ExptGTPRemat, Split: m.Split}
}

// Imbalance is the busiest pipeline stage's layers over num_layers/pp
// under module m's uneven split (model.StageLayers) with c's pp: at least
// 1, and 1 without a split or a model.
func Imbalance(m *layout.Module, c *Choice) float64 {
	imb, _ := steptime.Stages(m, parallel(m, c))
	return imb
}

func setVPP(m *layout.Module, v int) { m.VPP = v }
