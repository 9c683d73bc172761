package plan

// tiling is one walk over the tilings of the world by the modules in the
// order perm, consecutive and disjoint from rank 0 (Invariant 1): the
// one iterator behind the placements of --all (placements' two passes)
// and the bands of --top (bestFirst).
type tiling struct {
	perm   []int
	off, n []int
	// least is the fewest ranks module i may take (1 when nothing bounds
	// it), so that the modules after it keep theirs.
	least func(i int) int
	// enter is asked of module perm[p] on [at, at+size), with off and n
	// set: false skips the size and every tiling after it.
	enter func(p, i, at, size int) bool
	// leaf is called at each complete tiling.
	leaf func()
}

// tiles gives module t.perm[p] each span from rank at that the spec's
// constraints allow and leaves room for the others, and goes on to the
// next module; each visit counts toward MaxNodes.
func (s *searcher) tiles(t *tiling, p, at int) {
	w, k := s.spec.WorldSize, len(t.perm)
	i := t.perm[p]
	rest := 0
	for _, j := range t.perm[p+1:] {
		rest += t.least(j)
	}
	first, last := t.least(i), w-at-rest
	if p == k-1 {
		first = max(first, w-at) // the last module takes the rest
	}
	for size := first; size <= last && !s.stop && !s.full; size++ {
		if !s.spanAllowed(i, at, size) {
			continue
		}
		if !s.visit() {
			return
		}
		t.off[i], t.n[i] = at, size
		if !t.enter(p, i, at, size) {
			continue
		}
		if p < k-1 {
			s.tiles(t, p+1, at+size)
			continue
		}
		t.leaf()
	}
}

func oneRank(int) int { return 1 }
