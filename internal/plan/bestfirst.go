package plan

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"sort"

	"github.com/mimoplan/mimoplan/internal/validate"
)

// place is one non-colocated placement and its bounds: the largest and
// the sum of its modules' lbAt. Placements of equal bound are visited by
// the sum, so that the kept set's sum of module times (less's second
// key) tightens early.
type place struct {
	bound, sum float64
	off, n     []int
	ordinal    int // enumeration order, for a deterministic sort
}

// bestFirst visits the non-colocated placements (Top > 0) by increasing
// bound, in bands of bounds, and stops once a band reaches the worst kept
// candidate: every placement left has a bound, hence every candidate in
// it a step time, above it. The walk finds a band's placements by a cheap
// bound (lbKnown, which never falls as the search goes on); each is then
// placed by its exact one (lbAt), waiting for a later band when that is
// above this one, so that every placement whose bound is at most the
// threshold is visited, once (docs/suggest.md).
func (s *searcher) bestFirst() {
	k := len(s.spec.Modules)
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	off, n := make([]int, k), make([]int, k)
	// No placement's bound is below the compute of a tiling whose shares
	// follow the modules' FLOPs (placements): the first band starts there.
	least := 0.0
	for i := range s.shapes {
		least += s.time.Compute(&s.shapes[i], s.spec.WorldSize)
	}
	lo := math.Inf(-1)
	var deferred []place
	done := map[string]bool{}
	for width := 0.02; ; width *= 2 {
		hi := least * (1 + width)
		if least <= 0 || width > 1e3 {
			hi = math.MaxFloat64
		}
		// Past the worst kept candidate no placement can enter.
		hi = min(hi, s.threshold())
		// The band: the placements whose bound falls in (lo, hi], and those
		// of earlier bands whose exact bound turned out to fall here.
		var band, later []place
		for _, p := range deferred {
			if p.bound <= hi {
				band = append(band, p)
			} else {
				later = append(later, p)
			}
		}
		s.setNmin(hi)
		permute(idx, 0, func(perm []int) {
			s.tiles(s.bandTiling(perm, lo, hi, off, n, func() {
				band = append(band, place{off: slices.Clone(off), n: slices.Clone(n), ordinal: len(band)})
			}), 0, 0)
		})
		// Each placement by the bounds of its modules at their offsets;
		// those above the band wait for a later one.
		in := band[:0]
		for _, p := range band {
			p.bound, p.sum = s.placeBound(&p)
			switch {
			case p.bound <= hi:
				in = append(in, p)
			case !math.IsInf(p.bound, 1):
				later = append(later, p)
			}
		}
		band, deferred = in, later
		slices.SortFunc(band, func(a, b place) int {
			return cmp.Or(cmp.Compare(a.bound, b.bound), cmp.Compare(a.sum, b.sum), cmp.Compare(a.ordinal, b.ordinal))
		})
		for _, p := range band {
			if p.bound > s.threshold() || s.stop {
				break
			}
			// What validate refused since the band was sorted may have
			// raised the bound.
			b, sum := s.placeBound(&p)
			if b > hi {
				if !math.IsInf(b, 1) {
					p.bound = b // Invariant 7: it waits, never lost
					deferred = append(deferred, p)
				}
				continue
			}
			// A placement may come again: from the walk and from deferred.
			key := placeKey(p.off, p.n)
			if done[key] {
				continue
			}
			if s.beyond(b, sum) {
				continue
			}
			done[key] = true
			s.sizes(p.off, p.n)
		}
		if hi == math.MaxFloat64 || hi >= s.threshold() || s.stop {
			break // every placement whose bound may let a candidate in was visited
		}
		lo = hi
	}
}

// placeBound is the largest and the sum of p's modules' lbAt.
func (s *searcher) placeBound(p *place) (b, sum float64) {
	for i := range p.n {
		lb := s.lbAt(i, p.off[i], p.n[i])
		b, sum = max(b, lb), sum+lb
	}
	return b, sum
}

func placeKey(off, n []int) string {
	b := make([]byte, 0, 8*len(n))
	for i := range n {
		b = binary.AppendUvarint(b, uint64(off[i]))
		b = binary.AppendUvarint(b, uint64(n[i]))
	}
	return string(b)
}

// setNmin sets nmin: for each module the fewest ranks on which its compute
// is at most hi, world_size+1 when none (compute does not grow with the
// ranks: steptime.Model's inequality 8).
func (s *searcher) setNmin(hi float64) {
	w := s.spec.WorldSize
	s.nmin = s.nmin[:0]
	for i := range s.shapes {
		n := 1 + sort.Search(w, func(k int) bool { return s.time.Compute(&s.shapes[i], k+1) <= hi })
		s.nmin = append(s.nmin, n)
	}
}

// lbKnown is lbFull where it is known, else compute alone, which is at
// most lbFull and costs nothing.
func (s *searcher) lbKnown(i, n int) float64 {
	if s.lbs != nil && s.lbs[i] != nil && !math.IsNaN(s.lbs[i][n]) {
		return s.lbs[i][n]
	}
	return s.time.Compute(&s.shapes[i], n)
}

// bandTiling is the tiling of a band: each module takes at least nmin
// ranks, and visit is called at each tiling whose cheap bound (the
// largest of its modules' lbKnown) falls in (lo, hi].
func (s *searcher) bandTiling(perm []int, lo, hi float64, off, n []int, visit func()) *tiling {
	bound := make([]float64, len(perm)) // the cheap bound of perm[:p+1]
	return &tiling{perm: perm, off: off, n: n, least: func(i int) int { return s.nmin[i] },
		enter: func(p, i, _, size int) bool {
			// lbFull where compute alone is already half the band: there it
			// decides; elsewhere it is asked only of the placements visited.
			v := s.lbKnown(i, size)
			if v > hi/2 {
				v = s.lbFull(i, size)
			}
			prev := 0.0
			if p > 0 {
				prev = bound[p-1]
			}
			v = max(prev, v)
			bound[p] = v
			return v <= hi
		},
		leaf: func() {
			if bound[len(perm)-1] > lo {
				visit()
			}
		}}
}

// wholeSteps is validate.WholeSteps for the spec: the language module's
// dp and gtp_remat leave the global batch whole micro-batch steps.
func (s *searcher) wholeSteps(dp, gtp int) bool { return validate.WholeSteps(s.spec, dp, gtp) }
