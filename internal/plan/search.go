package plan

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// Estimator is what the planner asks of the model (internal/model).
type Estimator interface {
	// Shape describes spec module m's model; the zero Shape when it has
	// none.
	Shape(spec *layout.Layout, m *layout.Module) Shape
	// Memory returns a lower bound of the bytes validate estimates for the
	// most loaded GPU of module m sized as c, and the parameters on that
	// GPU; ok is false when m has no model.
	Memory(spec *layout.Layout, m *layout.Module, c *Choice) (bytes, params float64, ok bool)
	// Accepts reports whether m's model allows the sizes of c: false only
	// when validate would report an error about them whatever the rest of
	// the layout.
	Accepts(spec *layout.Layout, m *layout.Module, c *Choice) bool
}

// Request is one search.
type Request struct {
	Spec *layout.Layout
	Options
	Est Estimator
	HW  Hardware
	// GPUMemory is the bytes of one GPU (0: unknown, memory is not
	// checked).
	GPUMemory float64
	// Top is how many candidates to keep; 0 keeps every valid one (--all).
	Top int
	// Progress, when set, is called now and then with the number of
	// candidates checked so far.
	Progress func(checked int)
}

// Candidate is a valid layout with its score.
type Candidate struct {
	Score   Score    `json:"score" yaml:"score"`
	Modules []Choice `json:"modules" yaml:"modules"`
	// Layout is the candidate as validate checked it.
	Layout *layout.Layout `json:"-" yaml:"-"`
}

// Miss is a candidate that failed, with what blocks it.
type Miss struct {
	Modules []Choice `json:"modules" yaml:"modules"`
	Blocks  []string `json:"blocks" yaml:"blocks"`
	errors  int
	over    float64
}

// Result is the outcome of a search.
type Result struct {
	Candidates []Candidate `json:"candidates" yaml:"candidates"`
	// Misses are the closest failures, when no candidate is valid.
	Misses []Miss `json:"misses,omitempty" yaml:"misses,omitempty"`
	// Checked counts the candidates validate was asked about; Pruned those
	// dropped before (by memory or by a score bound).
	Checked int `json:"-" yaml:"-"`
}

const maxMisses = 5

type searcher struct {
	req    *Request
	spec   *layout.Layout
	job    job
	shapes []Shape
	// lang is the index of the language module, order the modules in the
	// order their sizes are chosen (language first: the encoders'
	// micro-batch counts depend on it).
	lang  int
	order []int
	// pass and near split the tilings in two passes (placements).
	pass int
	near float64

	grids *validate.Grids
	facts map[[2]int][]entry
	// accepted memoizes Estimator.Accepts by module and sizes (dp aside:
	// the model's rules read tp, cp, pp, vpp, ep and expt_tp).
	accepted map[badKey]bool
	nfact    int // entries in facts, to bound its memory

	// bad remembers the module sizes validate refused by a rule that
	// reads nothing else (learned.go); colocatedBad the colocated
	// placement refused as a whole.
	bad          map[badKey]bool
	badPair      map[pairKey]bool
	colocatedBad bool

	// lbs memoizes lbFull by module and number of ranks (NaN: not yet).
	lbs [][]float64

	kept   []Candidate // a max-heap by worse() when Top > 0
	misses []Miss
	res    Result
	cur    []Choice
	times  []ModuleTime
}

// Search runs the request.
func Search(req *Request) (*Result, error) {
	spec := req.Spec
	if spec.WorldSize <= 0 || len(spec.Modules) == 0 {
		return nil, fmt.Errorf("the spec has no world size or no modules")
	}
	if err := req.HW.Check(); err != nil {
		return nil, err
	}
	s := &searcher{req: req, spec: spec, lang: -1, grids: validate.NewGrids(), facts: map[[2]int][]entry{}, accepted: map[badKey]bool{}, bad: map[badKey]bool{}, badPair: map[pairKey]bool{}}
	s.job = job{hw: req.HW, mbs: 1, samples: spec.WorldSize}
	if spec.Cluster != nil && spec.Cluster.Nodes > 1 {
		s.job.gpn = spec.Cluster.GPUsPerNode
	}
	if b := spec.Batch; b != nil {
		s.job.mbs = b.MicroBatchSize
		s.job.samples = spec.WorldSize * b.MicroBatchSize
		if b.GlobalBatchSize > 0 {
			s.job.samples = b.GlobalBatchSize
		}
	}
	s.job.bridge = spec.Target == layout.TargetMegatronBridge
	for i := range spec.Modules {
		m := &spec.Modules[i]
		s.shapes = append(s.shapes, req.Est.Shape(spec, m))
		if m.Name == "language" {
			s.lang = i
		}
	}
	if s.lang >= 0 {
		s.order = append(s.order, s.lang)
	}
	for i := range spec.Modules {
		if i != s.lang {
			s.order = append(s.order, i)
		}
	}
	s.cur = make([]Choice, len(spec.Modules))
	s.times = make([]ModuleTime, len(spec.Modules))
	s.placements()
	s.finish()
	return &s.res, nil
}

// threshold is the step time a candidate must not exceed to enter the
// kept set: the worst kept one's once Top are kept.
func (s *searcher) threshold() float64 {
	if s.req.Top == 0 || len(s.kept) < s.req.Top {
		return math.Inf(1)
	}
	return s.kept[0].Score.StepSeconds
}

// placements enumerates every placement: all modules on the whole world
// (colocated), or every order of the modules on consecutive disjoint
// spans that tile the world (non-colocated), as docs/suggest.md defines.
// Non-colocated placements are visited in two passes, those whose compute
// alone is near the least possible first, so that the score bound is
// tight before the rest are visited.
func (s *searcher) placements() {
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
			s.job.colocated = true
			s.sizes(off, n)
			s.job.colocated = false
		}
	}
	if k == 1 || (spec.Colocated != nil && *spec.Colocated) {
		return
	}
	if s.req.Top > 0 {
		s.bestFirst()
		if len(s.kept) > 0 {
			return
		}
		// Nothing fits: every placement is visited, for the closest misses.
	}
	// The compute of a tiling is at least total/W, reached when every
	// module's share of the GPUs is its share of the FLOPs.
	total := 0.0
	for i := range s.shapes {
		total += s.job.compute(&s.shapes[i], w)
	}
	s.near = 1.25 * total
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	for s.pass = 1; s.pass <= 2; s.pass++ {
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
	for size := lo; size <= hi; size++ {
		if !s.spanAllowed(i, at, size) {
			continue
		}
		off[i], n[i] = at, size
		// Compute alone is a lower bound of a module's time.
		c := s.job.compute(&s.shapes[i], size)
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
				near = near && s.job.compute(&s.shapes[j], n[j]) <= s.near
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
	for i := range s.cur {
		s.cur[i] = Choice{NumRanks: n[i], RankOffset: off[i]} // bound reads the sizes of modules not chosen yet
	}
	s.choose(0, off, n)
}

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

// candidate scores the current choice and asks validate about it.
func (s *searcher) candidate() {
	step := s.bound(len(s.order) - 1)
	if t := s.threshold(); step > t || step == t && s.kept[0].Score.Warnings == 0 && !lexLess(s.cur, s.kept[0].Modules) {
		return // a tie enters only by fewer warnings or smaller sizes (less)
	}
	l := s.layout()
	res := validate.CheckWith(l, &diag.List{File: s.spec.File}, s.grids)
	s.res.Checked++
	if s.req.Progress != nil && s.res.Checked%4096 == 0 {
		s.req.Progress(s.res.Checked)
	}
	errs, warns := res.Diags.Count()
	if errs > 0 {
		s.learn(res.Diags)

		if len(s.kept) > 0 {
			return // misses matter only while nothing fits
		}
		var blocks []string
		for _, d := range res.Diags.Items {
			if d.Severity == diag.Error {
				blocks = append(blocks, blockText(d))
			}
		}
		s.miss(slices.Clone(s.cur), 0, blocks...)
		return
	}
	c := Candidate{Modules: slices.Clone(s.cur), Layout: l}
	c.Score = Score{StepSeconds: step, Samples: s.job.samples, Warnings: warns, Modules: slices.Clone(s.times)}
	for _, e := range res.Estimates { // validate's own figure, the one it checked
		t := &c.Score.Modules[e.Index]
		t.MemoryBytes = e.Estimate.TotalBytes()
		if s.req.GPUMemory > 0 {
			t.HeadroomBytes = s.req.GPUMemory - t.MemoryBytes
		}
	}
	for i := range c.Score.Modules {
		if !s.job.colocated && step > 0 {
			c.Score.Modules[i].Idle = 1 - c.Score.Modules[i].Total/step
		}
	}
	s.keep(c)
}

func blockText(d diag.Diagnostic) string {
	if d.Module != "" {
		return fmt.Sprintf("%s (%s): %s", d.Rule, d.Module, d.Message)
	}
	return fmt.Sprintf("%s: %s", d.Rule, d.Message)
}

// layout builds the candidate as a layout: the spec with every size
// filled in. Module fields keep the spec's positions, so that a
// diagnostic about a candidate points at the spec line that allowed it.
func (s *searcher) layout() *layout.Layout {
	l := *s.spec
	l.Colocated = nil
	l.Modules = slices.Clone(s.spec.Modules)
	for i := range l.Modules {
		m, c := &l.Modules[i], &s.cur[i]
		m.RankOffset, m.NumRanks, m.DP = c.RankOffset, c.NumRanks, c.DP
		m.TP, m.GTPRemat, m.CP, m.PP = c.TP, c.GTPRemat, c.CP, c.PP
		m.EP, m.ExptTP, m.ExptGTPRemat = c.EP, c.ExptTP, c.ExptGTPRemat
		m.MaxTP, m.AlignNode = 0, false
		setVPP(m, c.VPP)
	}
	return &l
}

// less orders candidates: faster first, then fewer warnings, then by
// their sizes (spans, then tp, cp, pp, ...), so that the order is total.
func less(a, b *Candidate) bool {
	if a.Score.StepSeconds != b.Score.StepSeconds {
		return a.Score.StepSeconds < b.Score.StepSeconds
	}
	if a.Score.Warnings != b.Score.Warnings {
		return a.Score.Warnings < b.Score.Warnings
	}
	for i := range a.Modules {
		if c := compareChoice(&a.Modules[i], &b.Modules[i]); c != 0 {
			return c < 0
		}
	}
	return false
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
		w := s.misses[len(s.misses)-1]
		if mi.errors > w.errors || mi.errors == w.errors && mi.over >= w.over {
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

func (s *searcher) finish() {
	slices.SortFunc(s.kept, func(a, b Candidate) int {
		switch {
		case less(&a, &b):
			return -1
		case less(&b, &a):
			return 1
		}
		return 0
	})
	s.res.Candidates = s.kept
	if len(s.kept) == 0 {
		s.res.Misses = s.misses
	}
}

func gib(b float64) string { return fmt.Sprintf("%.1f GiB", b/(1<<30)) }
