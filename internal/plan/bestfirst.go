package plan

import (
	"cmp"
	"container/heap"
	"encoding/binary"
	"math"
	"slices"
	"sort"

	"github.com/mimoplan/mimoplan/internal/validate"
)

// place is one non-colocated placement and its bounds: the largest and
// the sum of its modules' lbAt (exact), or a cheap bound of those
// (bandTiling). Placements of equal bound are visited by the sum, so that
// the kept set's sum of module times (less's second key) tightens early.
type place struct {
	bound, sum float64
	// at is each module's offset, then each module's ranks: one
	// allocation of 32-bit integers (a band holds up to a few hundred
	// thousand placements).
	at      []int32
	ordinal int // enumeration order, for a deterministic order
	exact   bool
}

func newPlace(bound, sum float64, off, n []int, ordinal int) place {
	k := len(n)
	at := make([]int32, 2*k)
	for i := range k {
		at[i], at[k+i] = int32(off[i]), int32(n[i])
	}
	return place{bound: bound, sum: sum, at: at, ordinal: ordinal}
}

// modules is the number of modules p places.
func (p *place) modules() int { return len(p.at) / 2 }

// span is module i's offset and ranks in p.
func (p *place) span(i int) (off, n int) { return int(p.at[i]), int(p.at[len(p.at)/2+i]) }

// spans writes p's offsets and ranks into off and n.
func (p *place) spans(off, n []int) {
	for i := range n {
		off[i], n[i] = p.span(i)
	}
}

// bestFirst visits the non-colocated placements (Top > 0) by increasing
// bound, in bands of bounds, and stops once a band reaches the worst kept
// candidate: every placement left has a bound, hence every candidate in
// it a step time, above it. The walk finds a band's placements by each
// module's lbFull (which never falls as the search goes on), stepping
// only over the sizes whose lbFull is in the band (bandSets). A placement
// enters the band by a cheap bound (bandTiling) and is bounded exactly
// (lbAt) when it comes first, then comes back by that, or waits for a
// later band when that is above this one, so that every placement whose
// bound is at most the threshold is visited, once, by its exact bound
// (docs/suggest.md). The band ends at the first placement past the kept
// set's worst: the rest come after it.
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
		sets, fewest := s.bandSets(hi)
		permute(idx, 0, func(perm []int) {
			s.tiles(s.bandTiling(perm, lo, hi, sets, fewest, off, n, func(bound, sum float64) {
				band = append(band, newPlace(bound, sum, off, n, len(band)))
			}), 0, 0)
		})
		deferred = later
		h := placeHeap(band)
		heap.Init(&h)
		for h.Len() > 0 {
			p := heap.Pop(&h).(place)
			// The placements come by a lower bound of their exact bounds, which
			// never comes before one popped earlier: past the threshold, or
			// past the worst kept by less's first two keys, so is every one
			// left (Invariant 6).
			if p.bound > s.threshold() || s.stop || s.beyond(p.bound, p.sum) {
				break
			}
			// What validate refused since the band was made may have raised
			// the bound.
			b, sum := s.placeBound(&p)
			if b > hi {
				if !math.IsInf(b, 1) {
					p.bound, p.exact = b, true // Invariant 7: it waits, never lost
					deferred = append(deferred, p)
				}
				continue
			}
			if !p.exact {
				p.bound, p.sum, p.exact = b, sum, true
				heap.Push(&h, p)
				continue
			}
			// A placement may come again: from the walk and from deferred.
			key := placeKey(&p)
			if done[key] {
				continue
			}
			if s.beyond(b, sum) {
				continue
			}
			done[key] = true
			p.spans(off, n)
			s.sizes(off, n)
		}
		if hi == math.MaxFloat64 || hi >= s.threshold() || s.stop {
			break // every placement whose bound may let a candidate in was visited
		}
		lo = hi
	}
}

// placeHeap orders placements by bound, then sum, then enumeration.
type placeHeap []place

func (h placeHeap) Len() int { return len(h) }
func (h placeHeap) Less(a, b int) bool {
	return cmp.Or(cmp.Compare(h[a].bound, h[b].bound), cmp.Compare(h[a].sum, h[b].sum), cmp.Compare(h[a].ordinal, h[b].ordinal)) < 0
}
func (h placeHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *placeHeap) Push(x any)   { *h = append(*h, x.(place)) }
func (h *placeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// placeBound is the largest and the sum of p's modules' lbAt.
func (s *searcher) placeBound(p *place) (b, sum float64) {
	for i := range p.modules() {
		off, n := p.span(i)
		lb := s.lbAt(i, off, n)
		b, sum = max(b, lb), sum+lb
	}
	return b, sum
}

func placeKey(p *place) string {
	b := make([]byte, 0, 4*len(p.at))
	for i := range p.modules() {
		off, n := p.span(i)
		b = binary.AppendUvarint(b, uint64(off))
		b = binary.AppendUvarint(b, uint64(n))
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

// bandSets are the sizes each module may take in a band: those from its
// nmin on whose lbFull is at most hi, leaving the others their fewest
// ranks; and each module's fewest. The modules with the most compute
// come first, so that the encoders' ranges end where the language
// module's fewest ranks leave them.
func (s *searcher) bandSets(hi float64) ([]sizeSet, []int) {
	w, k := s.spec.WorldSize, len(s.shapes)
	fewest := slices.Clone(s.nmin)
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(s.time.Compute(&s.shapes[b], w), s.time.Compute(&s.shapes[a], w))
	})
	sets := make([]sizeSet, k)
	for _, i := range order {
		rest := 0
		for j := range k {
			if j != i {
				rest += fewest[j]
			}
		}
		z := sizeSet{in: make([]bool, w+1)}
		for size := fewest[i]; size <= w-rest && !s.stop; size++ {
			if s.sizeAllowed(i, size) && s.lbBand(i, size) <= hi {
				z.list = append(z.list, size)
				z.in[size] = true
			}
		}
		fewest[i] = w + 1
		if len(z.list) > 0 {
			fewest[i] = z.list[0]
		}
		sets[i] = z
	}
	return sets, fewest
}

// lbBand is module i's bound on n ranks in a band: lbFull, or 0 for a
// module without FLOPs, which costs nothing (steptime.Model's inequality
// 2), so that its factorizations are not listed for every size.
func (s *searcher) lbBand(i, n int) float64 {
	if s.shapes[i].FLOPsPerSample == 0 {
		return 0
	}
	return s.lbFull(i, n)
}

// bandTiling is the tiling of a band: each module takes a size of its
// set, and visit is called at each tiling whose bound by lbFull (the
// largest of its modules') falls in (lo, hi], with a cheap bound of its
// exact bound and sum: lbFull, but lbAt for the module that sets it.
func (s *searcher) bandTiling(perm []int, lo, hi float64, sets []sizeSet, fewest []int, off, n []int, visit func(bound, sum float64)) *tiling {
	bound := make([]float64, len(perm)) // the bound of perm[:p+1]
	last := len(perm) - 1
	return &tiling{perm: perm, off: off, n: n, sets: sets, least: func(i int) int { return fewest[i] },
		enter: func(p, i, _, size int) bool {
			prev := 0.0
			if p > 0 {
				prev = bound[p-1]
			}
			bound[p] = max(prev, s.lbBand(i, size))
			return bound[p] <= hi
		},
		leaf: func() {
			if bound[last] <= lo {
				return
			}
			// The module that sets the bound, at its offset (lbAt): a few
			// sizes of few modules, where the others' lbAt would each be
			// asked of many placements. Summed in placeBound's order, so
			// that the sum is at most its (Invariant 5).
			top := perm[0]
			for _, i := range perm {
				if s.lbBand(i, n[i]) > s.lbBand(top, n[top]) {
					top = i
				}
			}
			b, sum := bound[last], 0.0
			for i := range n {
				v := s.lbBand(i, n[i])
				if i == top && v > 0 {
					v = s.lbAt(i, off[i], n[i])
					b = max(b, v)
				}
				sum += v
			}
			visit(b, sum)
		}}
}

// wholeSteps is validate.WholeSteps for the spec: the language module's
// dp and gtp_remat leave the global batch whole micro-batch steps.
func (s *searcher) wholeSteps(dp, gtp int) bool { return validate.WholeSteps(s.spec, dp, gtp) }
