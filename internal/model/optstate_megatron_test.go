package model

import (
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// optimizerDtypeCase is one case of testdata/optimizer-dtype-megatron.json,
// written by scripts/gen-optimizer-dtype-fixtures.py: Megatron-LM's
// parse_args and validate_args, get_megatron_optimizer_config and
// get_megatron_optimizer's check, run at d98e8a6 on the arguments
// launch-plan writes for the training keys.
type optimizerDtypeCase struct {
	Training struct {
		UseDistributedOptimizer    bool   `json:"use_distributed_optimizer"`
		GradReduceInFP32           bool   `json:"grad_reduce_in_fp32"`
		UsePrecisionAwareOptimizer bool   `json:"use_precision_aware_optimizer"`
		MainGradsDtype             string `json:"main_grads_dtype"`
		MainParamsDtype            string `json:"main_params_dtype"`
		ExpAvgDtype                string `json:"exp_avg_dtype"`
		ExpAvgSqDtype              string `json:"exp_avg_sq_dtype"`
	} `json:"training"`
	TransformerEngine bool   `json:"transformer_engine"`
	Outcome           string `json:"outcome"`
	Where             string `json:"where"`
	Message           string `json:"message"`
	Validated         *struct {
		AccumulateAllreduceGradsInFP32 bool `json:"accumulate_allreduce_grads_in_fp32"`
	} `json:"validated"`
}

// upstreamRule is the rule that answers where upstream raised: the
// optimizer's distributed-optimizer check and OptimizerConfig's missing
// FusedAdam (precision-aware-optimizer-needs), OptimizerConfig's fp32
// asserts (optimizer-dtype-needs-precision-aware, at the key its message
// names).
func upstreamRule(c optimizerDtypeCase) (rule, key string) {
	switch c.Where {
	case "megatron/core/optimizer/__init__.py:1058", "megatron/core/optimizer/optimizer_config.py:464":
		return RulePrecisionAwareNeeds, "training.use_precision_aware_optimizer"
	case "megatron/core/optimizer/optimizer_config.py:469", "megatron/core/optimizer/optimizer_config.py:472",
		"megatron/core/optimizer/optimizer_config.py:475", "megatron/core/optimizer/optimizer_config.py:478":
		return RuleOptimizerDtypeNeedsPA, "training." + strings.Fields(c.Message)[0]
	}
	return "", ""
}

// TestOptimizerDtypesMatchMegatron: where Megatron raises, mimoplan
// refuses with the rule for it at the key; where Megatron runs, neither
// precision-aware-optimizer-needs nor optimizer-dtype-needs-precision-aware
// is reported; and main-grads-dtype-needs-bf16-reduce is reported exactly
// when the gradient reduction validate_args settles on (fp32 or not)
// differs from the layout's grad_reduce_in_fp32.
func TestOptimizerDtypesMatchMegatron(t *testing.T) {
	cases := testutil.MegatronCases[optimizerDtypeCase](t, "testdata/optimizer-dtype-megatron.json")
	require.Len(t, cases, 66)
	raised := map[string]int{}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ct := c.Training
			tr := Training{UseDistributedOptimizer: ct.UseDistributedOptimizer, GradReduceInBF16: !ct.GradReduceInFP32,
				UsePrecisionAwareOptimizer: ct.UsePrecisionAwareOptimizer,
				MainGradsDtype:             ct.MainGradsDtype, MainParamsDtype: ct.MainParamsDtype,
				ExpAvgDtype: ct.ExpAvgDtype, ExpAvgSqDtype: ct.ExpAvgSqDtype}
			if !c.TransformerEngine {
				tr.TransformerImpl = ImplLocal
			}
			got := map[string][]string{}
			for _, v := range CheckOptimizer(tr) {
				got[v.Rule] = append(got[v.Rule], v.Key)
			}
			switch c.Outcome {
			case "raises":
				rule, key := upstreamRule(c)
				require.NotEmpty(t, rule, "upstream raised at %s: %s", c.Where, c.Message)
				assert.Contains(t, got[rule], key, "%s: %s", c.Where, c.Message)
				raised[rule]++
			case "ok":
				assert.Empty(t, got[RulePrecisionAwareNeeds])
				assert.Empty(t, got[RuleOptimizerDtypeNeedsPA])
			default:
				t.Fatalf("outcome %q", c.Outcome)
			}
			if c.Validated != nil {
				differs := c.Validated.AccumulateAllreduceGradsInFP32 != ct.GradReduceInFP32
				assert.Equal(t, differs, len(got[RuleMainGradsNeedsBF16Reduce]) > 0, "settled fp32 reduction %t, layout %t",
					c.Validated.AccumulateAllreduceGradsInFP32, ct.GradReduceInFP32)
			}
		})
	}
	// Both upstream checks are in the grid.
	assert.Positive(t, raised[RulePrecisionAwareNeeds])
	assert.Positive(t, raised[RuleOptimizerDtypeNeedsPA])
}
