package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOptimizerStateDtype: the precision-aware optimizer's state bytes a
// parameter (main parameter 2, each moment at its dtype) against the
// formula's 12, on the rank's shard over dp x cp, and no fp32 copy of the
// bf16 gradient shard; Megatron's own figure stays the formula's.
func TestOptimizerStateDtype(t *testing.T) {
	for _, tc := range []struct {
		name       string
		set        func(*Training)
		cp         int
		state      float64 // bytes a parameter over dp x cp; 0: no term
		mainGradCp bool    // main_grad_copy is counted
	}{
		{"fp32 state", func(*Training) {}, 1, 0, false},
		{"precision-aware, fp32 dtypes", func(t *Training) { t.UsePrecisionAwareOptimizer = true }, 1, 10, false},
		{"bf16 moments", func(t *Training) {
			t.UsePrecisionAwareOptimizer, t.ExpAvgDtype, t.ExpAvgSqDtype = true, DtypeBF16, DtypeBF16
		}, 1, 6, false},
		{"fp16 main params, fp8 and fp16 moments", func(t *Training) {
			t.UsePrecisionAwareOptimizer, t.MainParamsDtype, t.ExpAvgDtype, t.ExpAvgSqDtype = true, DtypeFP16, DtypeFP8, DtypeFP16
		}, 1, 5, false},
		{"bf16 moments over dp x cp", func(t *Training) {
			t.UsePrecisionAwareOptimizer, t.ExpAvgDtype, t.ExpAvgSqDtype = true, DtypeBF16, DtypeBF16
		}, 2, 6, false},
		{"bf16 gradients, fp32 state: the step's fp32 copy", func(t *Training) { t.GradReduceInBF16 = true }, 1, 0, true},
		{"bf16 gradients, bf16 moments: no copy", func(t *Training) {
			t.GradReduceInBF16, t.MainGradsDtype = true, DtypeBF16
			t.UsePrecisionAwareOptimizer, t.ExpAvgDtype, t.ExpAvgSqDtype = true, DtypeBF16, DtypeBF16
		}, 1, 6, false},
		{"without the distributed optimizer: nothing (refused by validate)", func(t *Training) {
			t.UseDistributedOptimizer = false
			t.UsePrecisionAwareOptimizer, t.ExpAvgDtype = true, DtypeBF16
		}, 1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, tr := gpt()
			tr.UseDistributedOptimizer = true
			tc.set(&tr)
			par := Parallel{NumRanks: 64, TP: 4, CP: tc.cp}
			e := Compute(llama(), par, tr)
			base := tr
			base.UsePrecisionAwareOptimizer, base.MainParamsDtype, base.ExpAvgDtype, base.ExpAvgSqDtype = false, "", "", ""
			ref := Compute(llama(), par, base)
			assert.Equal(t, ref.Megatron, e.Megatron, "Megatron's formula ignores the dtypes")
			var state float64
			var named bool
			for _, term := range e.Terms {
				if term.Name == TermOptimizerStateDtype {
					state, named = term.Bytes, true
				}
			}
			c, p, rt := llama().Resolve(), par.Resolve(), tr.Resolve()
			copied := mainGradCopy(&p, &rt, weightMemory(&c, &p, &rt, PaddedVocabSize(c.VocabSize, c.MakeVocabSizeDivisibleBy, p.TP)))
			dp := float64(64 / 4 / tc.cp)
			shard := e.Megatron.ShardParameters / (dp * float64(tc.cp))
			if tc.state == 0 {
				assert.False(t, named)
			} else {
				assert.InDelta(t, (tc.state-12)*shard, state, 1)
			}
			assert.Equal(t, tc.mainGradCp, copied > 0)
		})
	}
}

func TestDtypeBytes(t *testing.T) {
	for d, want := range map[string]float64{DtypeFP32: 4, DtypeFP16: 2, DtypeBF16: 2, DtypeFP8: 1} {
		assert.Equal(t, want, dtypeBytes(d), d)
	}
}

// TestCheckOptimizer: the precision-aware optimizer's rules read the
// training block alone; every violation has a hint and a training key.
func TestCheckOptimizer(t *testing.T) {
	for _, c := range []struct {
		name string
		tr   Training
		want []string
	}{
		{"Megatron's defaults", Training{}, nil},
		{"precision-aware optimizer without the distributed optimizer", Training{UsePrecisionAwareOptimizer: true}, []string{RulePrecisionAwareNeeds}},
		{"precision-aware optimizer on local layers", Training{UsePrecisionAwareOptimizer: true, UseDistributedOptimizer: true, TransformerImpl: ImplLocal}, []string{RulePrecisionAwareNeeds}},
		{"bf16 moments as Bridge's perf recipes set them", Training{UseDistributedOptimizer: true, UsePrecisionAwareOptimizer: true, ExpAvgDtype: DtypeBF16, ExpAvgSqDtype: DtypeBF16}, nil},
		{"every dtype without the precision-aware optimizer",
			Training{UseDistributedOptimizer: true, GradReduceInBF16: true, MainGradsDtype: DtypeBF16, MainParamsDtype: DtypeFP16, ExpAvgDtype: DtypeFP8, ExpAvgSqDtype: DtypeBF16},
			[]string{RuleOptimizerDtypeNeedsPA, RuleOptimizerDtypeNeedsPA, RuleOptimizerDtypeNeedsPA, RuleOptimizerDtypeNeedsPA}},
		{"bf16 main grads with an fp32 reduction", Training{UseDistributedOptimizer: true, UsePrecisionAwareOptimizer: true, MainGradsDtype: DtypeBF16}, []string{RuleMainGradsNeedsBF16Reduce}},
		{"bf16 main grads with a bf16 reduction", Training{UseDistributedOptimizer: true, UsePrecisionAwareOptimizer: true, MainGradsDtype: DtypeBF16, GradReduceInBF16: true}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, v := range CheckOptimizer(c.tr) {
				got = append(got, v.Rule)
				assert.NotEmpty(t, v.Hint, v.Rule)
				assert.Regexp(t, `^training\.`, v.Key, v.Rule)
			}
			assert.Equal(t, c.want, got)
			assert.Empty(t, Check(Config{NumLayers: 8, HiddenSize: 1024, NumAttentionHeads: 8, SeqLength: 4096}, Parallel{NumRanks: 8, TP: 2, DP: 4}, c.tr),
				"not a module rule")
		})
	}
}

// TestOptimizerShardAfterGTPRemat: gtp_remat's peers sit outside the
// group the distributed optimizer shards over, so every term sized by the
// rank's shard (the precision-aware state, the step's fp32 copy of bf16
// gradients) counts the 1/gtp_remat of each tensor-parallel weight the
// rank holds, over dp x cp.
func TestOptimizerShardAfterGTPRemat(t *testing.T) {
	for _, g := range []int{1, 2, 4} {
		_, tr := gpt()
		tr.UseDistributedOptimizer, tr.GradReduceInBF16 = true, true
		par := Parallel{NumRanks: 8 * g * 2, TP: 8, GTPRemat: g, CP: 2}
		c, p, rt := llama().Resolve(), par.Resolve(), tr.Resolve()
		w := weightMemory(&c, &p, &rt, PaddedVocabSize(c.VocabSize, c.MakeVocabSizeDivisibleBy, p.TP))
		require.Equal(t, 1, p.DP, "gtp %d", g)
		want := (w.tpSharded/float64(g) + w.replicated) / float64(p.DP*p.CP)
		assert.InDelta(t, want, w.optimizerShard(&p), 1, "gtp %d: shard", g)
		assert.InDelta(t, 4*want, mainGradCopy(&p, &rt, w), 4, "gtp %d: the step's fp32 copy", g)

		tr.UsePrecisionAwareOptimizer, tr.MainGradsDtype, tr.ExpAvgDtype, tr.ExpAvgSqDtype = true, DtypeBF16, DtypeBF16, DtypeBF16
		e := Compute(llama(), par, tr)
		var state float64
		for _, term := range e.Terms {
			if term.Name == TermOptimizerStateDtype {
				state = term.Bytes
			}
		}
		assert.InDelta(t, (optimizerStateBytes(&tr)-12)*want, state, 1, "gtp %d: precision-aware state", g)
	}
}
