package plan

import (
	"math"

	"github.com/mimoplan/mimoplan/internal/steptime"
)

// lbFull is a lower bound of module i's time on n ranks, whatever its
// offset and the other modules' sizes: the least, over the factorizations
// the model accepts and whose memory may fit, of the step-time model with
// every group at the faster bandwidth and, for an encoder, the most
// micro-batches any language split gives (the least bubble). Each term is
// at most the term the search computes for that factorization, so the
// bound never exceeds a candidate's time (steptime.Model's inequalities
// 4, 5 and 7); +Inf when nothing can fit.
func (s *searcher) lbFull(i, n int) float64 { // Invariant 5
	if s.lbs == nil {
		s.lbs = make([][]float64, len(s.spec.Modules))
	}
	if s.lbs[i] == nil {
		s.lbs[i] = make([]float64, s.spec.WorldSize+1)
		for j := range s.lbs[i] {
			s.lbs[i][j] = math.NaN()
		}
	}
	if v := s.lbs[i][n]; !math.IsNaN(v) {
		return v
	}
	best := s.minTime(i, 0, n, s.fast)
	s.lbs[i][n] = best
	return best
}

// lbAt is lbFull for module i at rank offset off: each group at the
// bandwidth the placement gives it (docs/suggest.md). The language
// module's time depends on nothing else, so for it the bound is its best
// time in the placement.
func (s *searcher) lbAt(i, off, n int) float64 { // Invariant 5
	key := [3]int{i, s.time.OffsetClass(off), n} // inequality 6 of steptime.Model
	gen := s.gen[[2]int{i, n}]
	if v, ok := s.lbAts.get(key); ok && v.gen == gen {
		return v.v
	}
	v := s.minTime(i, off, n, s.time)
	s.lbAts.put(key, known{v, gen}, 1)
	return v
}

// known is a bound with the generation of its module's refusals on its
// ranks it was computed under (searcher.gen).
type known struct {
	v   float64
	gen int
}

// boundFact is the factorizations minTime reads: the search's own when it
// has them, else a memo of its own, where the language module keeps only
// those that leave the global batch whole steps (the bounds ask for every
// module and size, the search for few).
func (s *searcher) boundFact(i, n int) *fact {
	key := [2]int{i, n}
	if f, ok := s.facts.get(key); ok {
		return f
	}
	if f, ok := s.bfacts.get(key); ok {
		return f
	}
	var keep func(dp, gtp int) bool
	if i == s.lang {
		keep = s.wholeSteps
	}
	f := s.newBoundFact(i, n, keep)
	s.bfacts.put(key, f, len(f.es))
	return f
}

// minTime is the least time k's model gives module i on n ranks at
// offset off, over the factorizations the model accepts, whose memory may
// fit and that validate has not refused, with an encoder's most
// micro-batches; +Inf when none.
func (s *searcher) minTime(i, off, n int, k steptime.Model) float64 {
	best := math.Inf(1)
	es := s.boundFact(i, n).es
	for j := range es {
		e := &es[j]
		// Entries come by their cheap bound (no bubble, no gradients), which
		// is at most their full one: past best none can lower it. The
		// margin covers rounding between the two sums (steptime.Model's
		// inequality 9).
		if e.lb > best*(1+1e-9) {
			break
		}
		if i == s.lang && !s.wholeSteps(e.z.DP, e.z.GTPRemat) {
			continue // before prepare: it costs nothing
		}
		s.prepare(i, n, e)
		if !e.ok || e.over > 0 || e.bad[col(s.colocated)] {
			continue
		}
		best = min(best, s.boundTime(i, off, n, e, k))
	}
	return best
}

// boundTime is entry e's time on n ranks at offset off by k's model with
// the least bubble module i can get: an encoder's with the most
// micro-batches any language split gives, the language module's with its
// own.
func (s *searcher) boundTime(i, off, n int, e *entry, k steptime.Model) float64 {
	mb := s.job.Microbatches(1)
	if i == s.lang {
		mb = s.job.Microbatches(e.z.DP * e.z.GTPRemat)
	}
	c := Choice{RankOffset: off, NumRanks: n, Sizes: e.z}
	m := stepModule(&c, mb, e.params)
	boundSplit(&s.spec.Modules[i], &m)
	return k.Time(&s.shapes[i], m).Total
}
