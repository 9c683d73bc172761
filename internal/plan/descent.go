package plan

import (
	"cmp"
	"slices"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// choose is the descent: it gives module s.order[p] each of its
// factorizations on its span in turn and goes on to the next module; past
// the last, the candidate is judged. Until a candidate is kept the
// factorizations come by lbTime, those over memory recorded as misses;
// once one is kept, by their exact time beside the language module as
// chosen (rank). Either way the first one past the threshold ends the
// loop (Invariant 8).
func (s *searcher) choose(p int, off, n []int) {
	if !s.visit() {
		return
	}
	if p == len(s.order) {
		s.candidate()
		return
	}
	i := s.order[p]
	m := &s.spec.Modules[i]
	o := s.options(i, off[i], n[i])
	// alive: some entry is neither over memory nor refused before, so the
	// module is not dead beside the language module's current lanes.
	alive, whole := false, true
	for k := range o.len() {
		e, t := o.at(k)
		s.curE[i] = e
		c := &s.cur[i]
		*c = Choice{Name: m.Name, RankOffset: off[i], NumRanks: n[i], Sizes: e.z}
		s.times[i] = t
		if s.beyond(s.bound(p)) {
			whole = false
			break // Invariant 8
		}
		if e.over > 0 { // Invariant 2; ranked lists hold none
			if len(s.kept) > 0 || e.missed {
				continue // misses matter only while nothing fits, and say the same each time
			}
			e.missed = true
			if !s.missDropped(1, e.over) { // spares the text of a miss dropped
				s.miss([]Choice{*c}, e.over, s.overText(m.Name, "at least ", e.mem))
			}
			continue
		}
		if s.isBad(i) { // Invariant 3
			continue
		}
		alive = true
		if s.sharedOver(p) { // Invariant 2
			continue
		}
		if s.colocatedRefused(p) { // Invariant 2
			continue
		}
		if !o.exact() {
			s.times[i] = s.timeOf(s.time, i, c, s.microbatches(i), e.params)
			if s.beyond(s.bound(p)) {
				continue
			}
		}
		if s.deadAhead(p, n) {
			continue
		}
		s.choose(p+1, off, n)
		if s.anyBad(p) || s.stop {
			return // a module chosen before this one is refused whatever this one is
		}
	}
	if p == 0 && whole && !s.colocated && !s.stop && !o.exact() && len(o.f.fit) == 0 {
		s.markSpent(n[i]) // every factorization over memory, each a miss now
	}
	// A ranked list leaves out what was refused when it was made: only an
	// empty one says the module is dead.
	if whole && !alive && p > 0 && s.lang >= 0 && (!o.exact() || o.len() == 0) {
		s.markDead(i, n[i])
	}
}

// options are a module's factorizations in the order the descent visits
// them: by lbTime from its fact until a candidate is kept, then by their
// exact time from rank.
type options struct {
	f *fact
	r *ranked
}

func (s *searcher) options(i, off, n int) options {
	if len(s.kept) > 0 {
		return options{r: s.rank(i, off, n)}
	}
	f := s.fact(i, n)
	s.listOK(i, n, f)
	return options{f: f}
}

func (o options) exact() bool { return o.r != nil }

func (o options) len() int {
	if o.r != nil {
		return len(o.r.es)
	}
	return len(o.f.ok)
}

// at is the k-th factorization with its time: the exact one when ranked,
// else lbTime, a lower bound of it.
func (o options) at(k int) (*entry, ModuleTime) {
	if o.r != nil {
		return o.r.es[k], o.r.times[k]
	}
	e := &o.f.es[o.f.ok[k]]
	return e, ModuleTime{Parts: steptime.Parts{Total: e.lbTime}}
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
	mem    float64 // its memory's lower bound (0: no model)
	// lbTime is a lower bound of the module's time whatever its offset and
	// the language module's lanes, with its parameters (listOK): lb with
	// the least bubble and the dp all-reduce at the faster bandwidth.
	lbTime float64
	// bad is set when validate refused these sizes by a rule that reads
	// nothing else (nogood.go), in a placement that is not colocated [0]
	// or is [1].
	bad    [2]bool
	missed bool // its memory miss was recorded
}

// fact is a module's factorizations of a number of ranks, cheapest lower
// bound first, and once listed (listOK) the indices of those the model
// accepts (ok) and of those that may also fit memory (fit), by lbTime.
type fact struct {
	es      []entry
	ok, fit []int32
	listed  bool
}

// fact lists module i's factorizations of n ranks (space.go), cheapest
// lower bound first, memoized.
func (s *searcher) fact(i, n int) *fact {
	key := [2]int{i, n}
	if f, ok := s.facts.get(key); ok {
		return f
	}
	f := s.newFact(i, n, nil)
	s.facts.put(key, f, len(f.es))
	return f
}

// newFact lists module i's factorizations of n ranks whose dp and
// gtp_remat keep accepts (nil: all), not memoized: the descent's, in
// factorizations' order where their lower bounds tie.
func (s *searcher) newFact(i, n int, keep func(dp, gtp int) bool) *fact {
	return s.factOf(i, n, factorizations(s.divs, s.spaces[i], n, keep, s.free[i], s.refuser(i, n)))
}

// newBoundFact is newFact in the order of boundFactorizations: what the
// bounds read, for which the order of ties does not matter.
func (s *searcher) newBoundFact(i, n int, keep func(dp, gtp int) bool) *fact {
	s.visitN(boundNodes)
	return s.factOf(i, n, boundFactorizations(s.divs, s.spaces[i], n, keep, s.free[i], s.refuser(i, n), s.laneCut(i)))
}

// refuser is refusedAt for module i on n ranks.
func (s *searcher) refuser(i, n int) func(prev, level sizeMask, z Sizes) bool {
	return func(prev, level sizeMask, z Sizes) bool { return s.refusedAt(i, prev, level, n, z) }
}

// factOf is the fact of module i's factorizations zs of n ranks.
func (s *searcher) factOf(i, n int, zs []Sizes) *fact {
	type byLB struct {
		lb float64
		j  int
	}
	m := &s.spec.Modules[i]
	order := make([]byLB, len(zs))
	for j, z := range zs {
		sm := stepModule(&Choice{NumRanks: n, Sizes: z}, 1, 0)
		boundSplit(m, &sm)
		order[j] = byLB{s.time.LowerBound(&s.shapes[i], sm), j}
	}
	// Ties keep the order of zs.
	slices.SortFunc(order, func(a, b byLB) int { return cmp.Or(cmp.Compare(a.lb, b.lb), cmp.Compare(a.j, b.j)) })
	es := make([]entry, len(zs))
	bad := s.badAt[[2]int{i, n}]
	for k, o := range order {
		z := zs[o.j]
		es[k] = entry{z: z, lb: o.lb}
		if bad {
			es[k].bad = [2]bool{s.bad[badKey{i, false, n, z}], s.bad[badKey{i, true, n, z}]}
		}
	}
	return &fact{es: es}
}

// listOK prepares every entry of f and lists those the model accepts.
func (s *searcher) listOK(i, n int, f *fact) {
	if f.listed {
		return
	}
	f.listed = true
	for j := range f.es {
		e := &f.es[j]
		s.prepare(i, n, e)
		if !e.ok {
			continue
		}
		e.lbTime = s.boundTime(i, 0, n, e, s.fast)
		f.ok = append(f.ok, int32(j))
		if e.over == 0 {
			f.fit = append(f.fit, int32(j))
		}
	}
	for _, l := range [][]int32{f.ok, f.fit} {
		slices.SortStableFunc(l, func(a, b int32) int { return cmp.Compare(f.es[a].lbTime, f.es[b].lbTime) })
	}
}

// prepare asks the model about an entry once: its own rules (the verdicts
// of model.Check, which validate runs for them, on the module's sizes
// alone), its memory lower bound and its parameters.
func (s *searcher) prepare(i, n int, e *entry) {
	if e.ready {
		return
	}
	m := &s.spec.Modules[i]
	c := Choice{Name: m.Name, NumRanks: n, Sizes: e.z}
	e.ready = true
	e.ok = s.accepts(i, &c) // Invariant 2
	if !e.ok {
		return
	}
	if b, params, ok := s.req.Est.Memory(s.spec, m, &c); ok {
		e.params, e.mem = params, b
		if lim := s.req.GPUMemory - s.req.Margin; s.req.GPUMemory > 0 && b > lim {
			e.over = b - lim
		}
	}
}

// acceptsKeyer is an Estimator that says which sizes its Accepts reads.
type acceptsKeyer interface {
	AcceptsKey(m *layout.Module, z Sizes) Sizes
}

// acceptKey is the accepted memo's key: a module and the sizes its
// Accepts reads, as 32-bit integers (a size is at most the world size,
// at most 2^24), 40 bytes where a badKey takes 96: on 16,384 GPUs the
// memo holds a few hundred thousand.
type acceptKey struct {
	module int32
	z      [9]int32
}

func acceptKeyOf(i int, z Sizes) acceptKey {
	return acceptKey{int32(i), [9]int32{int32(z.TP), int32(z.GTPRemat), int32(z.CP), int32(z.PP), int32(z.VPP), int32(z.DP), int32(z.EP),
		int32(z.ExptTP), int32(z.ExptGTPRemat)}}
}

func (s *searcher) accepts(i int, c *Choice) bool {
	z := c.Sizes
	z.DP = 0
	if s.keyer != nil {
		z = s.keyer.AcceptsKey(&s.spec.Modules[i], c.Sizes)
	}
	k := acceptKeyOf(i, z)
	ok, seen := s.accepted.get(k)
	if seen {
		return ok
	}
	if s.refusedAt(i, 0, levelEGTP, c.NumRanks, c.Sizes) {
		return false // refusal.go
	}
	if namer, can := s.req.Est.(ruleNamer); can {
		rules := namer.RefusedBy(s.spec, &s.spec.Modules[i], c)
		if ok = len(rules) == 0; !ok {
			s.learnRefusal(i, c.NumRanks, &c.Sizes, rules)
		}
	} else {
		ok = s.req.Est.Accepts(s.spec, &s.spec.Modules[i], c)
	}
	s.accepted.put(k, ok, 1)
	if x, can := s.req.Est.(explainer); !ok && can && len(s.kept) == 0 && len(s.ruleMisses) < maxMisses {
		// While nothing fits, the model's own rules may be what blocks
		// every candidate: shown when no candidate got further.
		s.ruleMisses = append(s.ruleMisses, Miss{Modules: []Choice{*c}, Blocks: x.Refusals(s.spec, &s.spec.Modules[i], c)})
	}
	return ok
}

// explainer is an Estimator that says why Accepts refuses sizes: its
// rules' messages, as validate prints them.
type explainer interface {
	Refusals(spec *layout.Layout, m *layout.Module, c *Choice) []string
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
	return s.job.Microbatches(lanes)
}

// bound is a lower bound of the step time and of the sum of module times
// once the modules s.order[:p+1] are chosen: the others count their lbFull
// (their compute alone under --all, where no bound prunes).
func (s *searcher) bound(p int) (step, sum float64) {
	b := 0.0
	for q, i := range s.order {
		t := s.times[i].Total
		if q > p {
			switch {
			case s.shapes[i].FLOPsPerSample == 0: // costs zero: steptime.Model's inequality 2
				t = 0
			case s.req.Top > 0:
				t = s.lbFull(i, s.cur[i].NumRanks)
			default:
				t = s.time.Compute(&s.shapes[i], s.cur[i].NumRanks)
			}
		}
		sum += t
		b = max(b, t)
	}
	if s.colocated {
		return sum, sum
	}
	return b, sum
}
