package plan

import "sort"

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
	// sets, when not nil, are the only sizes each module may take (a
	// band's, bestFirst): the walk steps over the others without a visit.
	sets []sizeSet
	// enter is asked of module perm[p] on [at, at+size), with off and n
	// set: false skips the size and every tiling after it.
	enter func(p, i, at, size int) bool
	// leaf is called at each complete tiling.
	leaf func()
	// step: the walk steps over the sizes of the descent's first module
	// that placements' pass steps over (spent.go).
	step bool
}

// sizeSet is a set of sizes: ascending, and by membership.
type sizeSet struct {
	list []int
	in   []bool // by size, up to the world size
}

// within is the part of the set in [lo, hi].
func (z *sizeSet) within(lo, hi int) []int {
	a := sort.SearchInts(z.list, lo)
	b := sort.SearchInts(z.list, hi+1)
	return z.list[a:max(a, b)]
}

func (z *sizeSet) has(n int) bool { return n >= 0 && n < len(z.in) && z.in[n] }

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
	if t.sets != nil {
		s.tilesIn(t, p, at, first, last)
		return
	}
	if t.step && s.tilesSpent(t, p, at, first, last) {
		return
	}
	for size := first; size <= last && !s.stop && !s.full; size++ {
		s.tile(t, p, i, at, size)
	}
}

// tilesIn is tiles over the sizes of t.sets alone, in the same order. The
// module before the last steps over the last one's sizes when they are
// fewer in its range: the last takes the rest, so that each of its sizes
// names one of the module's.
func (s *searcher) tilesIn(t *tiling, p, at, first, last int) {
	w, k := s.spec.WorldSize, len(t.perm)
	i := t.perm[p]
	mine := t.sets[i].within(first, last)
	if p == k-2 {
		j := t.perm[k-1]
		if theirs := t.sets[j].within(w-at-last, w-at-first); len(theirs) < len(mine) {
			for x := len(theirs) - 1; x >= 0 && !s.stop && !s.full; x-- {
				if size := w - at - theirs[x]; t.sets[i].has(size) {
					s.tile(t, p, i, at, size)
				}
			}
			return
		}
	}
	for _, size := range mine {
		if s.stop || s.full {
			return
		}
		if p == k-2 && !t.sets[t.perm[k-1]].has(w-at-size) {
			continue
		}
		s.tile(t, p, i, at, size)
	}
}

// tile places module i (at position p) on [at, at+size) and goes on.
func (s *searcher) tile(t *tiling, p, i, at, size int) {
	if !s.spanAllowed(i, at, size) {
		return
	}
	if !s.visit() {
		return
	}
	t.off[i], t.n[i] = at, size
	if !t.enter(p, i, at, size) {
		return
	}
	if p < len(t.perm)-1 {
		s.tiles(t, p+1, at+size)
		return
	}
	t.leaf()
}

func oneRank(int) int { return 1 }
