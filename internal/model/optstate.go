package model

import "fmt"

// TermOptimizerStateDtype names the precision-aware optimizer's state
// against the formula's fp32 state.
const TermOptimizerStateDtype = "optimizer_state_dtype"

// Optimizer dtypes as the layout writes them ("" is fp32).
const (
	DtypeFP32 = ""
	DtypeFP16 = "fp16"
	DtypeBF16 = "bf16"
	DtypeFP8  = "fp8"
)

// dtypeBytes is one element of an optimizer state in dtype d. fp8 is
// Megatron-LM's torch.uint8 (arguments.py:1077-1079 at d98e8a6), a
// Float8Tensor of one byte an element in Transformer Engine's FusedAdam
// (TransformerEngine@d0067d0da6cb transformer_engine/pytorch/optimizers/
// fused_adam.py:421-428); each non-fp32 state also gets one fp32 scale per
// tensor, which is left out.
func dtypeBytes(d string) float64 {
	switch d {
	case DtypeFP16, DtypeBF16:
		return 2
	case DtypeFP8:
		return 1
	}
	return 4
}

// optimizerStateBytes is what the distributed optimizer keeps a parameter
// of its shard: the main parameter and Adam's two moments. Megatron's
// formula counts 12, fp32 each (theoretical_memory_usage.py:293-296 at
// d98e8a6). With the precision-aware optimizer Transformer Engine's
// FusedAdam holds them (distrib_optimizer.py:450-452, optimizer/__init__.py
// :564-585): the moments in exp_avg_dtype and exp_avg_sq_dtype, the main
// parameter in main_params_dtype, where fp32 under bf16 is stored as the
// 16 bits a bf16 parameter lacks (store_param_remainders, on by default:
// optimizer_config.py:192, distrib_optimizer.py:1008-1009; Transformer
// Engine 2.1 or later, optimizer_config.py:437-438; fused_adam.py:213-214,
// :414-415, :626), so 2 bytes
// either way.
func optimizerStateBytes(t *Training) float64 {
	if !t.UsePrecisionAwareOptimizer {
		return 12
	}
	return 2 + dtypeBytes(t.ExpAvgDtype) + dtypeBytes(t.ExpAvgSqDtype)
}

// optimizerStateDtype adds the precision-aware optimizer's state against
// the formula's 12 bytes, on the shard the rank holds: dense parameters
// over dp x cp, experts over expert dp, after gtp_remat's shards.
func optimizerStateDtype(e *Estimate, p *Parallel, t *Training, w weights) {
	if !t.UseDistributedOptimizer || !t.UsePrecisionAwareOptimizer || t.torchAdam() {
		return
	}
	s := optimizerStateBytes(t)
	e.Add(Term{Name: TermOptimizerStateDtype, Part: PartWeights, Bytes: (s - 12) * w.optimizerShard(p),
		Why: fmt.Sprintf("the precision-aware optimizer keeps %g bytes a parameter over dp (main parameter 2, exp_avg %g, exp_avg_sq %g), the formula 12 in fp32",
			s, dtypeBytes(t.ExpAvgDtype), dtypeBytes(t.ExpAvgSqDtype))})
}
