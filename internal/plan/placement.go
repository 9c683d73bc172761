package plan

// placements enumerates every placement: all modules on the whole world
// (colocated), or every order of the modules on consecutive disjoint
// spans that tile the world (non-colocated), as docs/suggest.md defines.
// Non-colocated placements are visited in two passes, those whose compute
// alone is near the least possible first, so that the score bound is
// tight before the rest are visited.
func (s *searcher) placements() { // Invariant 1
	spec, w, k := s.spec, s.spec.WorldSize, len(s.spec.Modules)
	n := make([]int, k)
	off := make([]int, k)
	if k == 1 || spec.Colocated == nil || *spec.Colocated {
		ok := true
		for i := range spec.Modules {
			if !s.spanAllowed(i, 0, w) {
				ok = false
			}
			n[i], off[i] = w, 0
		}
		if ok {
			s.colocated = true
			s.sizes(off, n)
			s.colocated = false
		}
	}
	if k == 1 || (spec.Colocated != nil && *spec.Colocated) {
		return
	}
	if s.req.Top > 0 {
		s.bestFirst()
		if len(s.kept) > 0 || s.stop {
			return
		}
		// Nothing fits: every placement is visited, for the closest misses.
	}
	// The compute of a tiling is at least total/W, reached when every
	// module's share of the GPUs is its share of the FLOPs.
	total := 0.0
	for i := range s.shapes {
		total += s.time.Compute(&s.shapes[i], w)
	}
	s.near = 1.25 * total
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	for s.pass = 1; s.pass <= 2 && !s.stop; s.pass++ {
		permute(idx, 0, func(perm []int) { s.tile(perm, 0, 0, off, n) })
		if total == 0 {
			break // without FLOPs the first pass is every placement
		}
	}
}

// tile chooses the span of perm[p] starting at rank at.
func (s *searcher) tile(perm []int, p, at int, off, n []int) {
	w, k := s.spec.WorldSize, len(perm)
	i := perm[p]
	lo, hi := 1, w-at-(k-p-1)
	if p == k-1 {
		lo = w - at
	}
	for size := lo; size <= hi && !s.stop && !s.full; size++ {
		if !s.spanAllowed(i, at, size) {
			continue
		}
		if !s.visit() {
			return
		}
		off[i], n[i] = at, size
		// Compute alone is a lower bound of a module's time (steptime.Model's
		// inequality 3).
		c := s.time.Compute(&s.shapes[i], size)
		if c > s.threshold() || s.pass == 1 && c > s.near {
			continue
		}
		if p < k-1 {
			s.tile(perm, p+1, at+size, off, n)
			continue
		}
		if s.pass == 2 {
			near := true
			for j := range n {
				near = near && s.time.Compute(&s.shapes[j], n[j]) <= s.near
			}
			if near && s.near > 0 {
				continue // the first pass did it
			}
		}
		s.sizes(off, n)
	}
}

// spanAllowed applies the spec's placement constraints.
func (s *searcher) spanAllowed(i, offset, size int) bool {
	m := &s.spec.Modules[i]
	if m.Given("num_ranks") && m.NumRanks != size {
		return false
	}
	if m.Given("rank_offset") && m.RankOffset != offset {
		return false
	}
	if m.AlignNode && s.spec.Cluster != nil {
		g := s.spec.Cluster.GPUsPerNode
		if offset%g != 0 || size%g != 0 {
			return false
		}
	}
	return true
}

func permute(a []int, k int, visit func([]int)) {
	if k == len(a) {
		visit(a)
		return
	}
	for i := k; i < len(a); i++ {
		a[k], a[i] = a[i], a[k]
		permute(a, k+1, visit)
		a[k], a[i] = a[i], a[k]
	}
}

// sizes chooses every module's factorization for one placement, in
// s.order, pruning with the score bound.
func (s *searcher) sizes(off, n []int) {
	if s.full || s.stop {
		return
	}
	if s.req.Progress != nil {
		s.req.Progress(s.res.Checked, s.res.Nodes)
	}
	for i := range s.cur {
		s.cur[i] = Choice{NumRanks: n[i], RankOffset: off[i]} // bound reads the sizes of modules not chosen yet
	}
	s.choose(0, off, n)
}
