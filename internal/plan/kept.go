package plan

import (
	"fmt"
	"slices"
	"sort"
)

// less orders candidates: faster first, then the smaller sum of module
// times, then by their sizes (spans, then tp, cp, pp, ...), so that the
// order is total. Warnings are not a key: the step-time model prices the
// locality that group-crosses-node reports (docs/suggest.md), and every
// key is known before validate runs, so that a tie is decided without it.
func less(a, b *Candidate) bool { // Invariant 11
	if a.Score.StepSeconds != b.Score.StepSeconds {
		return a.Score.StepSeconds < b.Score.StepSeconds
	}
	if a.Score.SumSeconds != b.Score.SumSeconds {
		return a.Score.SumSeconds < b.Score.SumSeconds
	}
	// Of two layouts as fast, the one without warnings, then the one with
	// more memory to spare, is the one a user would run.
	if a.Score.Warnings != b.Score.Warnings {
		return a.Score.Warnings < b.Score.Warnings
	}
	if x, y := minHeadroom(&a.Score), minHeadroom(&b.Score); x != y {
		return x > y
	}
	for i := range a.Modules {
		if c := compareChoice(&a.Modules[i], &b.Modules[i]); c != 0 {
			return c < 0
		}
	}
	return false
}

// minHeadroom is the least memory a module of the score leaves free.
func minHeadroom(s *Score) float64 {
	h := 0.0
	for i, m := range s.Modules {
		if i == 0 || m.HeadroomBytes < h {
			h = m.HeadroomBytes
		}
	}
	return h
}

// lexLess is less's last key: a before b by their sizes.
func lexLess(a, b []Choice) bool {
	for i := range a {
		if c := compareChoice(&a[i], &b[i]); c != 0 {
			return c < 0
		}
	}
	return false
}

func compareChoice(a, b *Choice) int {
	x := []int{a.RankOffset, a.NumRanks, a.TP, a.GTPRemat, a.CP, a.PP, a.VPP, a.EP, a.ExptTP, a.ExptGTPRemat}
	y := []int{b.RankOffset, b.NumRanks, b.TP, b.GTPRemat, b.CP, b.PP, b.VPP, b.EP, b.ExptTP, b.ExptGTPRemat}
	return slices.Compare(x, y)
}

// keep adds c to the kept set; with Top, a max-heap of the Top best.
func (s *searcher) keep(c Candidate) {
	if s.req.Top == 0 {
		if len(s.kept) == s.limit() {
			s.full = true
			return
		}
		s.kept = append(s.kept, c)
		return
	}
	if len(s.kept) == s.req.Top {
		if !less(&c, &s.kept[0]) {
			return
		}
		s.kept[0] = c
		s.down(0)
		return
	}
	s.kept = append(s.kept, c)
	for j := len(s.kept) - 1; j > 0; {
		p := (j - 1) / 2
		if !less(&s.kept[p], &s.kept[j]) {
			break
		}
		s.kept[p], s.kept[j] = s.kept[j], s.kept[p]
		j = p
	}
}

func (s *searcher) down(j int) {
	h := s.kept
	for {
		l, r, big := 2*j+1, 2*j+2, j
		if l < len(h) && less(&h[big], &h[l]) {
			big = l
		}
		if r < len(h) && less(&h[big], &h[r]) {
			big = r
		}
		if big == j {
			return
		}
		h[j], h[big] = h[big], h[j]
		j = big
	}
}

// miss records a failed candidate (or, for memory, one module of it)
// among the closest ones: fewer blocking errors first, then the smaller
// memory excess.
func (s *searcher) miss(mods []Choice, over float64, blocks ...string) {
	if len(s.kept) > 0 {
		return // misses are shown only when nothing fits
	}
	mi := Miss{Modules: mods, Blocks: blocks, errors: len(blocks), over: over}
	for _, o := range s.misses {
		if slices.Equal(o.Blocks, mi.Blocks) {
			return // one example of each cause is enough
		}
	}
	if len(s.misses) == maxMisses {
		if s.missDropped(mi.errors, mi.over) {
			return
		}
		s.misses = s.misses[:len(s.misses)-1]
	}
	s.misses = append(s.misses, mi)
	sort.SliceStable(s.misses, func(a, b int) bool {
		x, y := s.misses[a], s.misses[b]
		if x.errors != y.errors {
			return x.errors < y.errors
		}
		return x.over < y.over
	})
}

// missDropped reports whether miss drops every miss with at least errors
// blocks and over bytes: something is kept, or the misses are full of
// ones as close (fewer blocks, or as many and no more excess). The worst
// miss kept only gets closer, so one dropped now is dropped later too.
func (s *searcher) missDropped(errors int, over float64) bool {
	if len(s.kept) > 0 {
		return true
	}
	if len(s.misses) < maxMisses {
		return false
	}
	w := &s.misses[len(s.misses)-1]
	return errors > w.errors || errors == w.errors && over >= w.over
}

// overText says that module name needs need bytes a GPU ("at least "
// for a lower bound), more than gpu_memory less the headroom kept.
func (s *searcher) overText(name, least string, need float64) string {
	lim := s.req.GPUMemory - s.req.Margin
	if s.req.Margin == 0 {
		return fmt.Sprintf("%s needs %s%s per GPU, %s more than gpu_memory %s", name, least, gib(need), gib(need-lim), gib(s.req.GPUMemory))
	}
	return fmt.Sprintf("%s needs %s%s per GPU, %s more than gpu_memory %s less the %s headroom kept (--headroom)",
		name, least, gib(need), gib(need-lim), gib(s.req.GPUMemory), gib(s.req.Margin))
}

func gib(b float64) string { return fmt.Sprintf("%.1f GiB", b/(1<<30)) }
