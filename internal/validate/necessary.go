package validate

import (
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
)

// Necessary conditions: what suggest tests of a module's sizes before it
// builds a candidate. Each is the condition of a rule validate reports,
// stated once here and read by that rule, so that the two cannot drift.

// ExpertParallelOK reports whether ep passes experts-not-divisible
// (num_experts divisible by ep) and ep-needs-experts (ep 1 on a model
// without experts) for module m.
func ExpertParallelOK(m *layout.Module, ep int) bool {
	switch {
	case m.NumExperts > 0:
		return expertsDivide(m.NumExperts, ep)
	case m.Model != nil:
		return !model.EPNeedsExperts(m.Model.Config, ep)
	}
	return true
}

func expertsDivide(experts, ep int) bool { return experts%ep == 0 }

// VPPValues lists the vpp sizes module m may have with pp stages when its
// layers split evenly over them: 1 (none, as Megatron reads a vpp of 1)
// and each divisor above 1 of the layers of a stage (vpp-needs-pp: pp > 1;
// layers-not-divisible-vpp); 1 alone for a module without a model, or
// whose layers pp does not divide. An uneven split's own rules
// (internal/model/pipeline.go) are the model's, which suggest asks for
// each candidate.
func VPPValues(m *layout.Module, pp int) []int {
	out := []int{1}
	if m.Model == nil {
		return out
	}
	layers := m.Model.Config.NumLayers
	if pp < 2 || layers%pp != 0 {
		return out
	}
	for v := 2; v <= layers/pp; v++ {
		if (layers/pp)%v == 0 {
			out = append(out, v)
		}
	}
	return out
}

// WholeSteps reports whether the language module's dp and gtp_remat
// leave the global batch a whole number of micro-batch steps
// (micro_batch_size x dp x gtp_remat), as global-batch-not-divisible
// requires on core and megatron-lm; true on megatron-bridge, whose check
// reads every module's dp, and without a global batch.
func WholeSteps(l *layout.Layout, dp, gtp int) bool {
	b := l.Batch
	if l.Target == layout.TargetMegatronBridge || b == nil || b.MicroBatchSize <= 0 || b.GlobalBatchSize <= 0 {
		return true
	}
	return wholeSteps(b.GlobalBatchSize, b.MicroBatchSize*dp*gtp)
}

func wholeSteps(gbs, step int) bool { return gbs%step == 0 }

// MicroBatch is the micro-batch of module m with data-parallel size dp
// beside the language module's lanes (its dp x gtp_remat), as validate
// estimates its memory with: on megatron-bridge micro_batch_size is the
// global micro-batch, split over the module's dp; on core and
// megatron-lm it is per language lane, and an encoder splits each step's
// samples over its dp. ok is false where the split is not whole (a batch
// rule reports it) and the layout's own micro_batch_size stands.
func MicroBatch(l *layout.Layout, m *layout.Module, dp, langLanes int) (mb int, ok bool) {
	b := l.Batch
	switch {
	case b == nil:
		return 0, false
	case l.Target == layout.TargetMegatronBridge:
		if b.MicroBatchSize%dp == 0 {
			return b.MicroBatchSize / dp, true
		}
	case m.Name != grid.LanguageModule:
		if step := b.MicroBatchSize * langLanes; step%dp == 0 {
			return step / dp, true
		}
	}
	return 0, false
}

// LeastMicroBatch is the least micro-batch MicroBatch gives module m with
// dp whatever the language module's lanes (the layout's
// micro_batch_size when MicroBatch gives none): its memory grows with the
// micro-batch, so suggest bounds the memory from below with it.
func LeastMicroBatch(l *layout.Layout, m *layout.Module, dp int) int {
	b := l.Batch
	switch {
	case b == nil:
		return 1
	case l.Target == layout.TargetMegatronBridge:
		return max(1, b.MicroBatchSize/dp)
	case m.Name != grid.LanguageModule:
		return 1 // a share of mbs x lanes over dp: at least one sample
	}
	return b.MicroBatchSize
}
