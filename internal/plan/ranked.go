package plan

import (
	"cmp"
	"slices"
)

// Once a candidate is kept, misses no longer matter and the descent visits
// each module's factorizations by their exact time in the placement
// (ranked), so that the first past the threshold ends the loop.

// rankKey is what a module's times depend on: its span and, for an
// encoder, the language module's lanes (its micro-batches).
type rankKey struct {
	module, off, n    int
	colocated         bool
	langDP, langLanes int
}

// ranked is a module's factorizations that may fit and were not refused
// when listed, with their times, fastest first.
type ranked struct {
	es    []*entry
	times []ModuleTime
}

// rank lists module i's factorizations on [off, off+n) by their time
// beside the language module as chosen now, leaving out those over
// memory and those refused so far.
func (s *searcher) rank(i, off, n int) *ranked {
	key := rankKey{module: i, off: s.time.OffsetClass(off), n: n, colocated: s.colocated} // steptime.Model's inequality 6
	if i != s.lang && s.lang >= 0 {
		l := &s.cur[s.lang]
		key.langDP, key.langLanes = l.DP, l.DP*l.GTPRemat
	}
	if r, ok := s.ranks.get(key); ok {
		return r
	}
	f := s.fact(i, n)
	s.listOK(i, n, f)
	m := &s.spec.Modules[i]
	r := &ranked{}
	saved := s.cur[i]
	for _, j := range f.fit {
		e := &f.es[j]
		s.curE[i] = e
		s.cur[i] = Choice{Name: m.Name, RankOffset: off, NumRanks: n, Sizes: e.z}
		if s.isBad(i) {
			continue
		}
		r.es = append(r.es, e)
		r.times = append(r.times, s.timeOf(s.time, i, &s.cur[i], s.microbatches(i), e.params))
	}
	s.cur[i] = saved
	idx := make([]int, len(r.es))
	for k := range idx {
		idx[k] = k
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(r.times[a].Total, r.times[b].Total) })
	out := &ranked{es: make([]*entry, len(idx)), times: make([]ModuleTime, len(idx))}
	for k, j := range idx {
		out.es[k], out.times[k] = r.es[j], r.times[j]
	}
	s.ranks.put(key, out, len(out.es))
	return out
}
