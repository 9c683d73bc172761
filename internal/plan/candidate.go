package plan

import (
	"fmt"
	"slices"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// candidate scores the current choice and asks validate about it, with
// every expert size of its expert-free modules.
func (s *searcher) candidate() {
	step, sum := s.bound(len(s.order) - 1)
	if !s.beyond(step, sum) {
		s.experts(0, step, sum)
	}
}

// experts visits the expert sizes of the expert-free modules from module
// i on, in the order of less (each module's in turn, spec order), and
// judges each candidate; false once a candidate cannot enter the kept
// set, since then no later one can: they share its score and come after
// it. With Top, the first one validate accepts is the layout's only
// candidate: the others differ from it in sizes that change nothing but
// the expert groups of a model without experts.
func (s *searcher) experts(i int, step, sum float64) bool { // Invariant 9
	for i < len(s.cur) && !s.free[i] {
		i++
	}
	if i == len(s.cur) {
		s.took = false
		// What the first expert sizes teach holds for the others:
		// nogood.go learns no rule that reads them there.
		return s.judge(step, sum) && !s.anyBad(len(s.order)) && !(s.req.Top > 0 && s.took) && !s.memoryRefusesRest()
	}
	c := &s.cur[i]
	base := c.Sizes
	defer func() { c.Sizes = base }()
	for _, x := range expertSizes(s.divs, s.spaces[i], c.NumRanks, c.PP, c.EP) {
		c.ExptTP, c.ExptGTPRemat = x[0], x[1]
		if !s.experts(i+1, step, sum) {
			return false
		}
	}
	return true
}

// judgeNodes is what a candidate judged counts toward MaxNodes: validate
// takes about a hundred times a node's time (26 us against 0.2 us, on the
// specs without models of docs/suggest.md), so that the limit bounds the
// time whichever dominates.
const judgeNodes = 100

// boundNodes is what listing a module's factorizations of a number of
// ranks for a bound counts (newBoundFact): about as long as a judgement
// where the model is asked about them, a few microseconds to tens.
const boundNodes = 100

// judge asks validate about the current choice, whose score is step and
// sum, and keeps it or learns from it; false when it cannot enter the
// kept set.
func (s *searcher) judge(step, sum float64) bool {
	if s.full || s.stop || s.beyond(step, sum) || s.req.Top > 0 && len(s.kept) == s.req.Top && step == s.threshold() && sum == s.kept[0].Score.SumSeconds &&
		!lexLess(s.cur, s.kept[0].Modules) && !s.mayWinTie(&s.kept[0].Score) {
		return false // a tie enters by fewer warnings, more headroom or smaller sizes (less)
	}
	if !s.visitN(judgeNodes) {
		return false
	}
	l := s.layout()
	res := validate.CheckWith(l, &diag.List{File: s.spec.File}, s.grids) // Invariant 4
	s.res.Checked++
	errs, warns := res.Diags.Count()
	s.memRefused = 0
	if errs > 0 && onlyMemory(res.Diags) {
		s.memRefused = errs
	}
	if errs > 0 {
		if s.atBase() {
			// A rule about expert sizes may refuse one of them and not
			// another: only the first ones teach (nogood.go).
			s.learn(res.Diags)
		}
		if len(s.kept) > 0 {
			return true // misses matter only while nothing fits
		}
		var blocks []string
		for _, d := range res.Diags.Items {
			if d.Severity == diag.Error {
				blocks = append(blocks, blockText(d))
			}
		}
		s.miss(slices.Clone(s.cur), 0, blocks...)
		return true
	}
	c := Candidate{Modules: slices.Clone(s.cur), Machine: l.Machine}
	c.Score = Score{StepSeconds: step, SumSeconds: sum, Samples: s.job.Samples, Warnings: warns, Modules: slices.Clone(s.times)}
	for _, e := range res.Estimates { // validate's own figure, the one it checked
		t := &c.Score.Modules[e.Index]
		t.MemoryBytes = e.Estimate.TotalBytes()
		if s.req.GPUMemory > 0 {
			t.HeadroomBytes = s.req.GPUMemory - t.MemoryBytes
			if t.HeadroomBytes < s.req.Margin {
				// Valid, but inside the headroom kept: a miss. The language
				// module's memory reads only its own sizes (as validate's
				// gpu-memory-short, learned.go), so its sizes are refused
				// for every other placement too.
				if e.Index == s.lang && s.atBase() {
					s.markBad(s.lang)
				}
				if len(s.kept) == 0 {
					s.miss(slices.Clone(s.cur), s.req.Margin-t.HeadroomBytes, s.overText(t.Name, "", t.MemoryBytes))
				}
				return true
			}
		}
	}
	for i := range c.Score.Modules {
		if !s.colocated && step > 0 {
			c.Score.Modules[i].Idle = 1 - c.Score.Modules[i].Total/step
		}
	}
	s.keep(c)
	s.took = true
	return true
}

// memoryRefusesRest reports whether the candidate just judged was refused
// by gpu-memory-short alone and every candidate that differs from it only
// in the expert sizes of expert-free modules would be refused with no
// other effect. Their modules' estimates are its own (those sizes change
// neither a dense model's memory nor its rules: model.CheckInputs,
// Invariant 9; the search lists only expert sizes that divide the ranks,
// so every module's grid stays sound), so validate reports the same
// gpu-memory-short, word for word, with at most other errors from rules
// that read expert sizes. Such a refusal is a miss of the same blocks
// (dropped beside the one just recorded, or as it was) or of more
// (dropped when missDropped says so); validate's verdict on them teaches
// nothing (only the first expert sizes teach, nogood.go). While nothing
// fits this spares validating every combination of the expert-free
// modules' expert sizes of a colocated candidate whose modules need more
// memory together than the GPU has (docs/performance.md).
func (s *searcher) memoryRefusesRest() bool {
	return !s.req.exhaustive && s.memRefused > 0 && s.missDropped(s.memRefused+1, 0)
}

// onlyMemory reports whether every error of d is gpu-memory-short.
func onlyMemory(d *diag.List) bool {
	for _, x := range d.Items {
		if x.Severity == diag.Error && diag.RuleID(x.Rule) != diag.RuleGPUMemoryShort {
			return false
		}
	}
	return true
}

// mayWinTie reports whether the current choice, tied with w on step and
// sum, might come before it by warnings or headroom, which only validate
// tells: not when w has no warning and at least the headroom the memory
// lower bounds leave the current choice.
func (s *searcher) mayWinTie(w *Score) bool {
	if w.Warnings > 0 {
		return true
	}
	ub := 0.0
	for i := range s.cur {
		h := 0.0
		if e := s.curE[i]; s.req.GPUMemory > 0 && e != nil && e.mem > 0 {
			h = s.req.GPUMemory - e.mem
		}
		if i == 0 || h < ub {
			ub = h
		}
	}
	return minHeadroom(w) < ub
}

// atBase reports whether every expert-free module has its first expert
// sizes, the ones its search entry holds.
func (s *searcher) atBase() bool {
	for i, f := range s.free {
		if f && s.cur[i].Sizes != s.curE[i].z {
			return false
		}
	}
	return true
}

func blockText(d diag.Diagnostic) string {
	if d.Module != "" {
		return fmt.Sprintf("%s (%s): %s", d.Rule, d.Module, d.Message)
	}
	return fmt.Sprintf("%s: %s", d.Rule, d.Message)
}

// layout builds the candidate as a layout: the spec with every size
// filled in. Module fields keep the spec's positions, so that a
// diagnostic about a candidate points at the spec line that allowed it.
func (s *searcher) layout() *layout.Layout {
	l := *s.spec
	l.Colocated = nil
	l.Modules = slices.Clone(s.spec.Modules)
	for i := range l.Modules {
		m, c := &l.Modules[i], &s.cur[i]
		m.RankOffset, m.NumRanks, m.DP = c.RankOffset, c.NumRanks, c.DP
		m.TP, m.GTPRemat, m.CP, m.PP = c.TP, c.GTPRemat, c.CP, c.PP
		m.EP, m.ExptTP, m.ExptGTPRemat = c.EP, c.ExptTP, c.ExptGTPRemat
		m.MaxTP, m.AlignNode = 0, false
		setVPP(m, c.VPP)
	}
	return &l
}
