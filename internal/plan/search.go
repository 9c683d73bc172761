package plan

import (
	"fmt"
	"math"
	"slices"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// Estimator is what the planner asks of the model (internal/model).
type Estimator interface {
	// Shape describes spec module m's model; the zero Shape when it has
	// none.
	Shape(spec *layout.Layout, m *layout.Module) steptime.Shape
	// Memory returns a lower bound of the bytes validate estimates for the
	// most loaded GPU of module m sized as c, and the parameters on that
	// GPU; ok is false when m has no model.
	Memory(spec *layout.Layout, m *layout.Module, c *Choice) (bytes, params float64, ok bool)
	// Accepts reports whether m's model allows the sizes of c: false only
	// when validate would report an error about them whatever the rest of
	// the layout.
	Accepts(spec *layout.Layout, m *layout.Module, c *Choice) bool
	// ExpertFree reports whether m's expert sizes (expt_tp,
	// expt_gtp_remat) change nothing Shape, Memory and Accepts report,
	// nor the step-time model: a model without experts. The search then
	// visits them last, for each candidate (candidate.go).
	ExpertFree(spec *layout.Layout, m *layout.Module) bool
}

// Request is one search.
type Request struct {
	Spec *layout.Layout
	Options
	Est Estimator
	// HW is the analytic step-time model's hardware, used when Time is
	// nil.
	HW steptime.Hardware
	// Time, when set, is the step-time model (else steptime.New(HW, the
	// spec's job)).
	Time steptime.Model
	// GPUMemory is the bytes of one GPU (0: unknown, memory is not
	// checked); Margin the bytes of it a candidate must leave free
	// (--headroom, DefaultHeadroom of GPUMemory unless told): one whose
	// estimate leaves less is a miss.
	GPUMemory, Margin float64
	// Top is how many candidates to keep; 0 keeps every valid one (--all).
	Top int
	// Limit bounds the candidates --all keeps (0: MaxAll): past it the
	// search stops with an error rather than run out of memory.
	Limit int
	// Progress, when set, is called at each placement the search visits
	// and every progressEvery nodes with the number of candidates checked
	// so far (often: it must be cheap).
	Progress func(checked, nodes int)
	// MaxNodes bounds the search nodes visited (0: DefaultMaxNodes): past
	// it the search stops with the best candidates found so far and
	// Result.Stopped set.
	MaxNodes int
	// exhaustive turns off the shortcuts that skip validate, or a
	// placement, only where that would change nothing but misses dropped
	// or nodes counted (exactShared, memoryRefusesRest, spent sizes):
	// tests compare the two results.
	exhaustive bool
}

// DefaultMaxNodes is the search nodes (a module's sizes tried, a candidate
// judged, a placement walked) a search visits at most unless told: about
// a minute where every node reaches validate (docs/suggest.md).
const DefaultMaxNodes = 250_000_000

// progressEvery is how many nodes pass between two progress reports
// within one placement.
const progressEvery = 1 << 12

// Candidate is a valid layout with its score.
type Candidate struct {
	Score   Score    `json:"score" yaml:"score"`
	Modules []Choice `json:"modules" yaml:"modules"`
	// Machine is the node the spec was planned on (suggest --probe), nil
	// for the spec's own cluster.
	Machine *layout.Machine `json:"-" yaml:"-"`
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
	// HeadroomKept is the Margin every candidate leaves free of a GPU's
	// memory (--headroom), in bytes.
	HeadroomKept float64 `json:"headroom_kept_bytes,omitempty" yaml:"headroom_kept_bytes,omitempty"`
	// Reason is what stops every candidate before any size matters, when
	// that is the spec itself (a colocated spec for a target without a
	// colocated mode, no ranks left for a module).
	Reason string `json:"reason,omitempty" yaml:"reason,omitempty"`
	// Checked counts the candidates validate was asked about; Pruned those
	// dropped before (by memory or by a score bound).
	Checked int `json:"-" yaml:"-"`
	// Nodes counts the search nodes visited; Stopped is set when they
	// reached MaxNodes and the search stopped before its end: the
	// candidates are then the best of those visited, not of every layout.
	Nodes   int  `json:"-" yaml:"-"`
	Stopped bool `json:"-" yaml:"-"`
}

const maxMisses = 5

// MaxAll is how many candidates --all keeps at most: every one is held to
// be sorted, at about a kilobyte each.
const MaxAll = 1 << 20

type searcher struct {
	req  *Request
	spec *layout.Layout
	// job is the spec's batch; time the step-time model and fast its
	// Fastest.
	job        steptime.Job
	time, fast steptime.Model
	shapes     []steptime.Shape
	colocated  bool // the placement being searched is colocated
	// free marks the modules whose expert sizes the search leaves to
	// candidate.go (Estimator.ExpertFree).
	free []bool
	divs divCache
	// spaces is each module's space (space.go).
	spaces []*space
	took   bool // the last candidate judged was valid
	full   bool // --all passed its Limit: the search stops
	// stop is set once the nodes visited reach MaxNodes: every loop of
	// the search then returns, keeping what it found.
	stop bool
	// lang is the index of the language module, order the modules in the
	// order their sizes are chosen (language first: the encoders'
	// micro-batch counts depend on it).
	lang  int
	order []int
	// pass and near split the tilings in two passes (placements).
	pass int
	near float64

	grids *validate.Grids
	// facts memoizes each module's factorizations of a number of ranks,
	// bfacts those the bounds read (bound.go); accepted memoizes
	// Estimator.Accepts by module and AcceptsKey.
	facts, bfacts memo[[2]int, *fact]
	accepted      memo[acceptKey, bool]
	keyer         acceptsKeyer // req.Est, when it is one
	explains      bool         // req.Est is an explainer
	// refused are the model's refusals by the sizes their rules read
	// (refusal.go).
	refused refusals

	// The nogoods (nogood.go): bad remembers the module sizes validate
	// refused by a rule that reads nothing else that varies, badPair an
	// encoder's lanes beside the language module's, modeBad a placement
	// mode refused as a whole; kinds what each rule teaches.
	bad     map[badKey]bool
	badAt   map[[2]int]bool // a module and ranks of which bad holds sizes
	badPair map[pairKey]bool
	// badLanes are an encoder's sizes beside the language module's lanes,
	// by the masks laneMasks lists for each module (nogood.go).
	badLanes  map[lanesKey]bool
	laneMasks [][]sizeMask
	modeBad   [2]bool // every non-colocated [0] or colocated [1] placement is refused
	kinds     map[kindKey]learnt
	// least memoizes leastBytes (NaN: no model, or nothing fits); shared
	// is sharedOver's buffer.
	least  map[[2]int]float64
	shared []float64
	colo   []validate.ColocatedSizes // colocatedRefused's buffer
	// coloBytes memoizes colocatedBytes.
	coloBytes memo[coloKey, float64]
	// memRefused is the number of errors of the last candidate judged
	// when each is gpu-memory-short (memoryRefusesRest), else 0.
	memRefused int
	// coloMisses counts the candidates colocatedRefused drops that are
	// judged anyway for the misses.
	coloMisses int
	dead       memo[deadKey, bool]
	// spentN are the spent sizes of the descent's first module, stepN
	// those placements' walk steps over in its pass (spent.go).
	spentN, stepN *spentSizes

	// lbs memoizes lbFull by module and number of ranks (NaN: not yet);
	// nmin is each module's fewest ranks within a band (bestfirst.go).
	lbs   [][]float64
	lbAts memo[[3]int, known]
	// gen counts the refusals of each module's sizes on a number of
	// ranks (markBad): an lbAt computed before the last is recomputed.
	gen   map[[2]int]int
	ranks memo[rankKey, *ranked] // rank (ranked.go)
	nmin  []int

	// curE is the entry of each module's current choice.
	curE []*entry

	kept   []Candidate // a max-heap by worse() when Top > 0
	misses []Miss
	// ruleMisses are sizes the model's own rules refused, the misses shown
	// when no candidate got as far as memory or validate.
	ruleMisses []Miss
	res        Result
	cur        []Choice
	times      []ModuleTime
}

// Search runs the request.
func Search(req *Request) (*Result, error) {
	s, err := newSearcher(req)
	if err != nil {
		return nil, err
	}
	s.placements()
	if s.full {
		return nil, fmt.Errorf("more than %d valid layouts: --all holds every one to sort them; use --top K, or fix more of the spec's sizes", s.limit())
	}
	s.finish()
	return &s.res, nil
}

// newSearcher is the searcher of req before it searches.
func newSearcher(req *Request) (*searcher, error) {
	spec := req.Spec
	if spec.WorldSize <= 0 || len(spec.Modules) == 0 {
		return nil, fmt.Errorf("the spec has no world size or no modules")
	}
	job := steptime.JobOf(spec)
	model := req.Time
	if model == nil {
		if err := req.HW.Check(); err != nil {
			return nil, err
		}
		model = steptime.New(req.HW, job)
	}
	s := &searcher{req: req, spec: spec, lang: -1, grids: validate.NewGrids(), bad: map[badKey]bool{}, badAt: map[[2]int]bool{}, gen: map[[2]int]int{}, badPair: map[pairKey]bool{}, badLanes: map[lanesKey]bool{}, kinds: map[kindKey]learnt{}, least: map[[2]int]float64{}, divs: divCache{}}
	s.keyer, _ = req.Est.(acceptsKeyer)
	// The bounds' lists are asked again only where lbAt is (lbFull is kept
	// by module and ranks): a few thousand entries do.
	s.bfacts.most = maxBoundEntries
	_, s.explains = req.Est.(explainer)
	s.job, s.time, s.fast = job, model, model.Fastest()
	for i := range spec.Modules {
		m := &spec.Modules[i]
		s.shapes = append(s.shapes, req.Est.Shape(spec, m))
		s.free = append(s.free, req.Est.ExpertFree(spec, m))
		s.spaces = append(s.spaces, newSpace(m, req.Options))
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
	s.laneMasks = make([][]sizeMask, len(spec.Modules))
	s.cur = make([]Choice, len(spec.Modules))
	s.curE = make([]*entry, len(spec.Modules))
	s.times = make([]ModuleTime, len(spec.Modules))
	return s, nil
}

// visit counts a search node; false once the search must stop (MaxNodes
// reached or --all full).
func (s *searcher) visit() bool {
	return s.visitN(1)
}

// visitN counts n nodes at once.
func (s *searcher) visitN(n int) bool {
	if s.stop || s.full {
		return false
	}
	s.res.Nodes += n
	most := s.req.MaxNodes
	if most <= 0 {
		most = DefaultMaxNodes
	}
	if s.res.Nodes >= most {
		s.stop, s.res.Stopped = true, true
	}
	if s.req.Progress != nil && s.res.Nodes%progressEvery < n {
		s.req.Progress(s.res.Checked, s.res.Nodes)
	}
	return !s.stop
}

// threshold is the step time a candidate must not exceed to enter the
// kept set: the worst kept one's once Top are kept.
func (s *searcher) threshold() float64 {
	if s.req.Top == 0 || len(s.kept) < s.req.Top {
		return math.Inf(1)
	}
	return s.kept[0].Score.StepSeconds
}

func (s *searcher) limit() int {
	if s.req.Limit > 0 {
		return s.req.Limit
	}
	return MaxAll
}

// beyond reports whether every candidate whose step time is at least step
// and whose sum of module times is at least sum ranks after the worst kept
// one by the first two keys of less, so cannot enter the kept set.
func (s *searcher) beyond(step, sum float64) bool { // Invariant 6
	if s.req.Top == 0 || len(s.kept) < s.req.Top {
		return false
	}
	w := &s.kept[0].Score
	return step > w.StepSeconds || step == w.StepSeconds && sum > w.SumSeconds
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
	if s.req.GPUMemory > 0 {
		s.res.HeadroomKept = s.req.Margin
	}
	if len(s.kept) == 0 {
		s.res.Misses = s.misses
		if len(s.misses) == 0 {
			s.res.Misses = s.ruleMisses
		}
		s.res.Reason = blocker(s.spec)
	}
}
