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
		if !s.req.exhaustive {
			s.startStep()
		}
		permute(idx, 0, func(perm []int) { s.tiles(s.passTiling(perm, off, n), 0, 0) })
		if total == 0 {
			break // without FLOPs the first pass is every placement
		}
	}
}

// passTiling is the tiling of one pass: a span whose compute alone is
// past the threshold (or, in the first pass, past near) is skipped, and
// the second pass leaves out the tilings the first one visited.
func (s *searcher) passTiling(perm, off, n []int) *tiling {
	return &tiling{perm: perm, off: off, n: n, least: oneRank, step: true,
		enter: func(_, i, _, size int) bool {
			// Compute alone is a lower bound of a module's time
			// (steptime.Model's inequality 3; Invariant 5).
			c := s.time.Compute(&s.shapes[i], size)
			ok := c <= s.threshold() && !(s.pass == 1 && c > s.near)
			if !ok {
				s.stepOver(i, size)
			}
			return ok
		},
		leaf: func() {
			if s.pass == 2 && s.near > 0 {
				near := true
				for j := range n {
					near = near && s.time.Compute(&s.shapes[j], n[j]) <= s.near
				}
				if near {
					return // the first pass did it
				}
			}
			s.sizes(off, n)
		}}
}

// spanAllowed applies the spec's placement constraints.
func (s *searcher) spanAllowed(i, offset, size int) bool {
	m, sp := &s.spec.Modules[i], s.spaces[i]
	if sp.ranks && m.NumRanks != size {
		return false
	}
	if sp.offset && m.RankOffset != offset {
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

// sizeAllowed is spanAllowed's constraints on the size alone.
func (s *searcher) sizeAllowed(i, size int) bool {
	m := &s.spec.Modules[i]
	if s.spaces[i].ranks && m.NumRanks != size {
		return false
	}
	return !(m.AlignNode && s.spec.Cluster != nil && size%s.spec.Cluster.GPUsPerNode != 0)
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
