package plan

import (
	"cmp"
	"fmt"
	"slices"
)

func (s *searcher) choose(p int, off, n []int) {
	if p == len(s.order) {
		s.candidate()
		return
	}
	i := s.order[p]
	m := &s.spec.Modules[i]
	es := s.entries(i, n[i])
	for k := range es {
		e := &es[k]
		c := &s.cur[i]
		*c = Choice{Name: m.Name, RankOffset: off[i], NumRanks: n[i], Sizes: e.z}
		// Entries come cheapest first: once this module's own lower bound
		// passes the threshold, so does every later entry's.
		s.times[i] = ModuleTime{Total: e.lb}
		if s.bound(p) > s.threshold() {
			break
		}
		s.prepare(i, n[i], e)
		if !e.ok {
			continue
		}
		if e.over > 0 {
			if len(s.kept) > 0 {
				continue // misses matter only while nothing fits
			}
			s.miss([]Choice{*c}, e.over, fmt.Sprintf("%s needs at least %s per GPU, %s more than gpu_memory %s",
				m.Name, gib(e.over+s.req.GPUMemory), gib(e.over), gib(s.req.GPUMemory)))
			continue
		}
		if s.isBad(i) {
			continue
		}
		s.times[i] = s.job.time(c, &s.shapes[i], s.microbatches(i), e.params)
		if s.bound(p) > s.threshold() {
			continue
		}
		s.choose(p+1, off, n)
		if s.anyBad(p) {
			return // a module chosen before this one is refused whatever this one is
		}
	}
}

// entry is one factorization of a module's ranks with what the search
// needs of it. The lower bound is computed for every entry, the rest
// (prepare) only for the entries the search reaches.
type entry struct {
	z      Sizes
	lb     float64 // a lower bound of the module's time, whatever its offset, micro-batches and parameters
	ready  bool    // ok, params and over are set
	ok     bool    // the model's rules accept the sizes
	params float64 // parameters on the most loaded GPU
	over   float64 // bytes by which its memory's lower bound exceeds gpu_memory (0: it may fit)
}

// maxEntries bounds the memoized factorizations; past it the memo starts
// afresh, so that memory stays bounded at any cluster size.
const maxEntries = 1 << 19

// entries lists module i's factorizations of n ranks (space.go), cheapest
// lower bound first.
func (s *searcher) entries(i, n int) []entry {
	key := [2]int{i, n}
	if es, ok := s.facts[key]; ok {
		return es
	}
	m := &s.spec.Modules[i]
	var es []entry
	for _, z := range factorizations(m, n, s.req.Options) {
		c := Choice{Name: m.Name, NumRanks: n, Sizes: z}
		es = append(es, entry{z: z, lb: s.job.lowerBound(&c, &s.shapes[i], 0)})
	}
	slices.SortStableFunc(es, func(a, b entry) int { return cmp.Compare(a.lb, b.lb) })
	if s.nfact+len(es) > maxEntries {
		clear(s.facts)
		s.nfact = 0
	}
	s.facts[key] = es
	s.nfact += len(es)
	return es
}

// prepare asks the model about an entry once: its own rules (model.Check,
// the function validate runs for them, on the module's sizes alone), its
// memory lower bound and its parameters.
func (s *searcher) prepare(i, n int, e *entry) {
	if e.ready {
		return
	}
	m := &s.spec.Modules[i]
	c := Choice{Name: m.Name, NumRanks: n, Sizes: e.z}
	e.ready = true
	e.ok = s.accepts(i, &c)
	if !e.ok {
		return
	}
	if b, params, ok := s.req.Est.Memory(s.spec, m, &c); ok {
		e.params = params
		if s.req.GPUMemory > 0 && b > s.req.GPUMemory {
			e.over = b - s.req.GPUMemory
		}
	}
}

func (s *searcher) accepts(i int, c *Choice) bool {
	k := badKey{module: i, z: c.Sizes}
	k.z.DP = 0
	ok, seen := s.accepted[k]
	if !seen {
		ok = s.req.Est.Accepts(s.spec, &s.spec.Modules[i], c)
		if len(s.accepted) >= maxEntries {
			clear(s.accepted) // bounded memory
		}
		s.accepted[k] = ok
	}
	return ok
}

// microbatches is module i's number of micro-batches per global batch:
// the language module's, for every module (an encoder runs one
// micro-batch per language micro-batch step).
func (s *searcher) microbatches(int) int {
	lanes := 1
	if s.lang >= 0 {
		c := &s.cur[s.lang]
		lanes = c.DP * c.GTPRemat
	}
	return s.job.microbatches(lanes)
}

// bound is a lower bound of the step time once the modules s.order[:p+1]
// are chosen: the others count their lbFull (their compute alone under
// --all, where no bound prunes).
func (s *searcher) bound(p int) float64 {
	b := 0.0
	for q, i := range s.order {
		t := s.times[i].Total
		if q > p {
			switch {
			case s.shapes[i].FLOPsPerSample == 0:
				t = 0
			case s.req.Top > 0:
				t = s.lbFull(i, s.cur[i].NumRanks)
			default:
				t = s.job.compute(&s.shapes[i], s.cur[i].NumRanks)
			}
		}
		if s.job.colocated {
			b += t
		} else {
			b = max(b, t)
		}
	}
	return b
}
