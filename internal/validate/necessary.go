package validate

import (
	"fmt"

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

// ColocatedSizes are the sizes of a colocated module that
// colocated-pp-cp-unsupported reads.
type ColocatedSizes struct{ TP, GTPRemat, CP, PP, DP, EP, ExptTP, ExptGTPRemat int }

// ColocatedPPOK reports whether pp passes colocated-pp-cp-unsupported:
// colocated, every module is its own first and last pipeline stage.
func ColocatedPPOK(pp int) bool { return pp == 1 }

// ColocatedPPText and ColocatedCPText are colocated-pp-cp-unsupported's
// messages about a module of that pp or cp (suggest's misses quote them).
func ColocatedPPText(pp int) string {
	return fmt.Sprintf("pp is %d, but colocated modules run every module as its own first and last pipeline stage, and their ColocatedBridgeCommunicator takes pp 1", pp)
}

func ColocatedCPText(cp int) string {
	return fmt.Sprintf("cp is %d, but these colocated modules do not share one set of groups, so they need a ColocatedBridgeCommunicator, which takes cp 1", cp)
}

// ColocatedCPOK reports whether colocated modules of sizes ms pass
// colocated-pp-cp-unsupported's cp condition: every cp is 1, or they can
// all run on the global parallel state, the language module's (ms[lang])
// groups: every module has its tp and gtp_remat and its dp*cp ranks, and
// either its cp or cp 1 (replicated over its cp group: encoders see whole
// samples there); a module with expert sizes has the language's (one
// expert grid). With lang -1 (the language module not among ms yet) it
// reports whether some language module may still make them pass, so that
// false refuses every completion.
func ColocatedCPOK(ms []ColocatedSizes, lang int) bool {
	cp := 1 // the one cp above 1 they may have: the language's
	for _, m := range ms {
		if m.CP > 1 && cp > 1 && m.CP != cp {
			return false
		}
		cp = max(cp, m.CP)
	}
	if cp == 1 {
		return true
	}
	r := ms[0]
	for _, m := range ms {
		if m.TP != r.TP || m.GTPRemat != r.GTPRemat || m.DP*m.CP != r.DP*r.CP {
			return false
		}
	}
	if lang < 0 {
		return true
	}
	l := ms[lang]
	for _, m := range ms {
		dense := m.EP == 1 && m.ExptTP == 1 && m.ExptGTPRemat == 1
		if m.CP != 1 && m.CP != l.CP || !dense && (m.EP != l.EP || m.ExptTP != l.ExptTP || m.ExptGTPRemat != l.ExptGTPRemat) {
			return false
		}
	}
	return true
}
