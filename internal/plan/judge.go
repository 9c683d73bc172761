package plan

import (
	"fmt"
	"slices"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// candidate scores the current choice and asks validate about it.
func (s *searcher) candidate() {
	step := s.bound(len(s.order) - 1)
	if t := s.threshold(); step > t || step == t && s.kept[0].Score.Warnings == 0 && !lexLess(s.cur, s.kept[0].Modules) {
		return // a tie enters only by fewer warnings or smaller sizes (less)
	}
	l := s.layout()
	res := validate.CheckWith(l, &diag.List{File: s.spec.File}, s.grids)
	s.res.Checked++
	if s.req.Progress != nil && s.res.Checked%4096 == 0 {
		s.req.Progress(s.res.Checked)
	}
	errs, warns := res.Diags.Count()
	if errs > 0 {
		s.learn(res.Diags)

		if len(s.kept) > 0 {
			return // misses matter only while nothing fits
		}
		var blocks []string
		for _, d := range res.Diags.Items {
			if d.Severity == diag.Error {
				blocks = append(blocks, blockText(d))
			}
		}
		s.miss(slices.Clone(s.cur), 0, blocks...)
		return
	}
	c := Candidate{Modules: slices.Clone(s.cur), Layout: l}
	c.Score = Score{StepSeconds: step, Samples: s.job.samples, Warnings: warns, Modules: slices.Clone(s.times)}
	for _, e := range res.Estimates { // validate's own figure, the one it checked
		t := &c.Score.Modules[e.Index]
		t.MemoryBytes = e.Estimate.TotalBytes()
		if s.req.GPUMemory > 0 {
			t.HeadroomBytes = s.req.GPUMemory - t.MemoryBytes
		}
	}
	for i := range c.Score.Modules {
		if !s.job.colocated && step > 0 {
			c.Score.Modules[i].Idle = 1 - c.Score.Modules[i].Total/step
		}
	}
	s.keep(c)
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
