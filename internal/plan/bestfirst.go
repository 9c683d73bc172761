package plan

import (
	"cmp"
	"math"
	"slices"
)

// lbFull is a lower bound of module i's time on n ranks, whatever its
// offset and the other modules' sizes: the least, over the factorizations
// the model accepts and whose memory may fit, of the step-time model with
// every group at the faster bandwidth and, for an encoder, the most
// micro-batches any language split gives (the least bubble). Each term is
// at most the term the search computes for that factorization, so the
// bound never exceeds a candidate's time; +Inf when nothing can fit.
func (s *searcher) lbFull(i, n int) float64 {
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
	k := s.job
	k.gpn = 0
	k.hw.NVLink = max(s.job.hw.NVLink, s.job.hw.Network)
	m := &s.spec.Modules[i]
	best := math.Inf(1)
	es := s.entries(i, n)
	for j := range es {
		e := &es[j]
		// Entries come by their cheap bound (no bubble, no gradients), which
		// is at most their full one: past best none can lower it. The
		// margin covers rounding between the two sums.
		if e.lb > best*(1+1e-9) {
			break
		}
		s.prepare(i, n, e)
		if !e.ok || e.over > 0 || s.bad[badKey{i, s.job.colocated, n, e.z}] || i == s.lang && !s.wholeSteps(&e.z) {
			continue
		}
		mb := s.job.microbatches(1)
		if i == s.lang {
			mb = s.job.microbatches(e.z.DP * e.z.GTPRemat)
		}
		c := Choice{Name: m.Name, NumRanks: n, Sizes: e.z}
		best = min(best, k.time(&c, &s.shapes[i], mb, e.params).Total)
	}
	s.lbs[i][n] = best
	return best
}

// place is one non-colocated placement and its bound: the largest
// lbFull of its modules.
type place struct {
	bound   float64
	off, n  []int
	ordinal int // enumeration order, for a deterministic sort
}

// bestFirst visits the non-colocated placements (Top > 0) by increasing
// bound, in bands of bounds, and stops once a band starts past the worst
// kept candidate: every placement left has a bound, hence every
// candidate in it a step time, above it. A band holds only the
// placements whose bound falls inside it.
func (s *searcher) bestFirst() {
	k := len(s.spec.Modules)
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	off, n := make([]int, k), make([]int, k)
	least := math.Inf(1)
	permute(idx, 0, func(perm []int) {
		s.walk(perm, 0, 0, 0, math.Inf(-1), math.Inf(1), off, n, func(b float64) { least = min(least, b) })
	})
	if math.IsInf(least, 1) {
		return // no placement can fit
	}
	lo := math.Inf(-1)
	for width := 0.02; lo < s.threshold() && !math.IsInf(lo, 1); width *= 2 {
		hi := least * (1 + width)
		if least <= 0 || width > 1e3 {
			hi = math.MaxFloat64
		}
		var band []place
		permute(idx, 0, func(perm []int) {
			s.walk(perm, 0, 0, 0, lo, hi, off, n, func(b float64) {
				band = append(band, place{bound: b, off: slices.Clone(off), n: slices.Clone(n), ordinal: len(band)})
			})
		})
		slices.SortFunc(band, func(a, b place) int {
			return cmp.Or(cmp.Compare(a.bound, b.bound), cmp.Compare(a.ordinal, b.ordinal))
		})
		for _, p := range band {
			if p.bound > s.threshold() {
				break
			}
			// What validate refused since the band was sorted may have
			// raised the bound.
			b := 0.0
			for i := range p.n {
				b = max(b, s.lbFull(i, p.n[i]))
			}
			if b > s.threshold() {
				continue
			}
			s.sizes(p.off, p.n)
		}
		lo = hi
		if hi == math.MaxFloat64 {
			break
		}
	}
}

// walk enumerates the spans of perm[p:] from rank at, as tile does, and
// calls visit with the bound of each complete placement in (lo, hi].
func (s *searcher) walk(perm []int, p, at int, b, lo, hi float64, off, n []int, visit func(float64)) {
	w, k := s.spec.WorldSize, len(perm)
	i := perm[p]
	first, last := 1, w-at-(k-p-1)
	if p == k-1 {
		first = w - at
	}
	for size := first; size <= last; size++ {
		if !s.spanAllowed(i, at, size) {
			continue
		}
		bb := max(b, s.lbFull(i, size))
		if bb > hi {
			continue
		}
		off[i], n[i] = at, size
		if p < k-1 {
			s.walk(perm, p+1, at+size, bb, lo, hi, off, n, visit)
			continue
		}
		if bb > lo {
			visit(bb)
		}
	}
}

// wholeSteps reports whether the language sizes z leave the global batch
// a whole number of micro-batch steps (micro_batch_size x dp x gtp_remat),
// which validate requires outside megatron-bridge
// (global-batch-not-divisible, internal/validate/batch.go).
func (s *searcher) wholeSteps(z *Sizes) bool {
	b := s.spec.Batch
	if s.job.bridge || b == nil || b.MicroBatchSize <= 0 || b.GlobalBatchSize <= 0 {
		return true
	}
	return b.GlobalBatchSize%(b.MicroBatchSize*z.DP*z.GTPRemat) == 0
}
