package validate

import (
	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/model"
)

// optimizer reports the precision-aware optimizer's keys Megatron refuses
// (model.CheckOptimizer), and padding to capacity where TransformerConfig
// refuses it (model.CheckMoECapacity): the training block alone decides,
// so they are checked once for the layout, with or without a model.
// testdata/optimizer-dtype-megatron.json and moe-capacity-megatron.json in
// internal/model (scripts/gen-optimizer-dtype-fixtures.py,
// gen-moe-capacity-fixtures.py) hold upstream's verdicts.
func (c *checker) optimizer() {
	lt := c.l.Training
	if lt == nil {
		return
	}
	c.trainingViolations(model.CheckOptimizer(lt.Model()))
	c.trainingViolations(model.CheckMoECapacity(lt.Model()))
}

// trainingViolations reports the model's verdicts on the training block
// alone, each at the training key it names, for no module.
func (c *checker) trainingViolations(vs []model.Violation) {
	for _, v := range vs {
		c.d.Add(diag.RuleID(v.Rule), c.l.Pos(v.Key), "", v.Hint, "%s", v.Message)
	}
}
