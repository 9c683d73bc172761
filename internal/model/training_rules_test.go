package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTrainingRules(t *testing.T) {
	dense := Config{NumLayers: 8, HiddenSize: 1024, NumAttentionHeads: 8, SeqLength: 4096}
	moe := dense
	moe.NumExperts = 8
	tp2 := Parallel{NumRanks: 8, TP: 2, PP: 1, CP: 1, DP: 4, EP: 1}
	ep4pp2 := Parallel{NumRanks: 8, TP: 1, PP: 2, CP: 1, DP: 4, EP: 4}
	full := Training{RecomputeGranularity: RecomputeFull, RecomputeMethod: "uniform", RecomputeNumLayers: 1}
	for _, c := range []struct {
		name string
		cfg  Config
		par  Parallel
		tr   Training
		want []string
	}{
		{"full with method and layers", dense, tp2, full, nil},
		{"full alone", dense, tp2, Training{RecomputeGranularity: RecomputeFull},
			[]string{RuleRecomputeFullNeedsMethod, RuleRecomputeFullNeedsMethod}},
		{"full without layers", dense, tp2, Training{RecomputeGranularity: RecomputeFull, RecomputeMethod: "block"},
			[]string{RuleRecomputeFullNeedsMethod}},
		{"selective with method", dense, tp2, Training{RecomputeGranularity: RecomputeSelective, RecomputeMethod: "uniform", RecomputeNumLayers: 2},
			[]string{RuleRecomputeSelectiveNoMethod, RuleRecomputeSelectiveNoMethod}},
		{"layers without granularity", dense, tp2, Training{RecomputeNumLayers: 2}, []string{RuleRecomputeSettingUnused}},
		{"param gather alone", dense, tp2, Training{OverlapParamGather: true},
			[]string{RuleOverlapParamGatherNeeds, RuleOverlapParamGatherNeeds}},
		{"param gather as recipes set it", dense, tp2, Training{OverlapParamGather: true, OverlapGradReduce: true, UseDistributedOptimizer: true}, nil},
		{"fp8 param gather without the distributed optimizer", dense, tp2, Training{FP8: "hybrid", FP8ParamGather: true}, []string{RuleFP8ParamGatherNeeds}},
		{"fp8 param gather as Bridge's fp8 recipes set it", dense, tp2, Training{FP8: "hybrid", FP8ParamGather: true, UseDistributedOptimizer: true}, nil},
		{"tp comm overlap without sp", dense, tp2, Training{TPCommOverlap: true}, []string{RuleTPCommOverlapNeedsSP}},
		{"tp comm overlap with sp", dense, tp2, Training{TPCommOverlap: true, SequenceParallel: true}, nil},
		{"local attention on TE", dense, tp2, Training{AttentionBackend: "local"}, []string{RuleLocalAttentionNeedsLocal}},
		{"local attention on local", dense, tp2, Training{AttentionBackend: "local", TransformerImpl: "local"}, nil},
		{"fp8 on local layers", dense, tp2, Training{FP8: "hybrid", TransformerImpl: "local"}, []string{RuleFP8NeedsTE}},
		{"moe overlap on a dense model is Megatron's no-op", dense, tp2, Training{OverlapMoEExpertParallelComm: true}, nil},
		{"moe overlap, everything missing", moe, Parallel{NumRanks: 8, TP: 1, PP: 2, CP: 1, DP: 4, EP: 1}, Training{OverlapMoEExpertParallelComm: true, RecomputeGranularity: RecomputeFull, RecomputeMethod: "uniform", RecomputeNumLayers: 1},
			[]string{RuleMoECommOverlapUnsupported, RuleMoECommOverlapUnsupported, RuleMoECommOverlapUnsupported, RuleMoECommOverlapUnsupported}},
		{"moe overlap, vpp from the pipeline layout", moe, func() Parallel { p := ep4pp2; p.Split.Layout = "Ettt|tt|tt|tL"; return p }(),
			Training{OverlapMoEExpertParallelComm: true, MoETokenDispatcherType: "alltoall"}, nil},
		{"moe overlap, a layout of one stage a rank", moe, func() Parallel { p := ep4pp2; p.Split.Layout = "Etttt|ttttL"; return p }(),
			Training{OverlapMoEExpertParallelComm: true, MoETokenDispatcherType: "alltoall"}, []string{RuleMoECommOverlapUnsupported}},
		{"moe overlap as recipes set it", moe, func() Parallel { p := ep4pp2; p.VPP = 2; return p }(),
			Training{OverlapMoEExpertParallelComm: true, MoETokenDispatcherType: "alltoall"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Rules(c.cfg, c.par, c.tr)
			assert.Equal(t, c.want, got)
			vs := Check(c.cfg, c.par, c.tr)
			assert.Len(t, vs, len(got))
			for _, v := range vs {
				assert.NotEmpty(t, v.Hint, v.Rule)
				assert.Regexp(t, `^training\.`, v.Key, v.Rule)
			}
		})
	}
}
