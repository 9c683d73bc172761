package plan

// A size of the descent's first module (the language module) is spent
// once the descent has run on it with every factorization over memory:
// it then recorded each as a miss (choose), and on any later placement
// that gives the module as many ranks it records nothing new and goes no
// further, whatever the other modules' spans. placements' walk steps over
// such placements without visiting them: when nothing fits, every tiling
// of the world was walked for the closest misses, about W^2 of them for
// each order of three modules (docs/performance.md).
//
// The misses stay those of the whole walk (Invariant 10): the placements
// stepped over are those whose descent would only count a node. (The
// factorizations' memo may forget a size and its entries' missed marks;
// the walk that visits it again records the same misses, which miss
// drops: same blocks, or no closer than those it keeps by then.)

// spentSizes are the spent sizes of one module, with the next and the
// previous size not spent from any size (union-find with path halving),
// so that a walk steps over a run of spent sizes at once.
type spentSizes struct {
	spent    []bool
	nxt, prv []int32
}

func newSpentSizes(w int) *spentSizes {
	z := &spentSizes{spent: make([]bool, w+2), nxt: make([]int32, w+2), prv: make([]int32, w+2)}
	for x := range z.nxt {
		z.nxt[x], z.prv[x] = int32(x), int32(x)
	}
	return z
}

func (z *spentSizes) has(x int) bool { return z != nil && z.spent[x] }

func (z *spentSizes) mark(x int) {
	if z.spent[x] {
		return
	}
	z.spent[x] = true
	z.nxt[x], z.prv[x] = int32(x+1), int32(x-1)
}

// next is the least size from x on that is not spent (w+1 when none).
func (z *spentSizes) next(x int) int {
	for int(z.nxt[x]) != x {
		z.nxt[x] = z.nxt[z.nxt[x]]
		x = int(z.nxt[x])
	}
	return x
}

// prev is the greatest size up to x that is not spent (0 when none: no
// module has 0 ranks).
func (z *spentSizes) prev(x int) int {
	for x > 0 && int(z.prv[x]) != x {
		z.prv[x] = z.prv[max(z.prv[x], 0)]
		x = max(int(z.prv[x]), 0)
	}
	return x
}

// markSpent records that the descent's first module on n ranks is spent
// (choose calls it there, after a whole loop of factorizations all over
// memory).
func (s *searcher) markSpent(n int) {
	if s.spentN == nil {
		s.spentN = newSpentSizes(s.spec.WorldSize)
	}
	s.spentN.mark(n)
	if s.stepN != nil {
		s.stepN.mark(n)
	}
}

// startStep starts a pass of placements' walk: the sizes it steps over are
// the spent ones, and those of the pass's own that the walk refuses by
// the size alone (stepOver).
func (s *searcher) startStep() {
	s.stepN = newSpentSizes(s.spec.WorldSize)
	if s.spentN != nil {
		copy(s.stepN.spent, s.spentN.spent)
		copy(s.stepN.nxt, s.spentN.nxt)
		copy(s.stepN.prv, s.spentN.prv)
	}
}

// stepOver records that the walk's enter refused the descent's first
// module (module i) on size ranks by the size alone, for the rest of the
// pass: the refusal reads the module's compute on those ranks, against a
// threshold that only falls.
func (s *searcher) stepOver(i, size int) {
	if s.stepN != nil && i == s.order[0] {
		s.stepN.mark(size)
	}
}

// tilesSpent is tiles for placements' walk: the same tilings in the same
// order, less those that give the descent's first module (mod) a size
// stepped over (spent, or refused by the pass), whose runs it steps over
// at once. It reports false when it is not the walk's to do.
func (s *searcher) tilesSpent(t *tiling, p, at, first, last int) bool {
	z := s.stepN
	if z == nil {
		return false
	}
	if first > last {
		return true
	}
	k := len(t.perm)
	mod := s.order[0]
	i := t.perm[p]
	placed := func() bool { // mod is placed before p on a size stepped over
		for _, j := range t.perm[:p] {
			if j == mod {
				return z.has(t.n[mod])
			}
		}
		return false
	}
	switch {
	case placed():
		return true
	case i == mod:
		for size := z.next(max(first, 1)); size <= last && !s.stop && !s.full; size = z.next(size + 1) {
			s.tile(t, p, i, at, size)
		}
	case p == k-2 && t.perm[k-1] == mod:
		// The last module takes the rest: the sizes of this one in order
		// are those of mod's not stepped over, from the largest down.
		w := s.spec.WorldSize
		for x := z.prev(w - at - first); x >= w-at-last && x > 0 && !s.stop && !s.full; x = z.prev(x - 1) {
			s.tile(t, p, i, at, w-at-x)
		}
	default:
		for size := first; size <= last && !s.stop && !s.full && !placed(); size++ {
			s.tile(t, p, i, at, size)
		}
	}
	return true
}
