package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// core checks the rules of Megatron-LM's create_topology,
// _validate_grid_layout and ModuleGridSpec, then builds the topology when
// nothing stands in the way.
func (c *checker) core() {
	l := c.l
	if l.Version != 1 {
		return // a layout of another version is not read further
	}
	c.language()
	c.sized = make([]*grid.Module, len(l.Modules))
	for i := range l.Modules {
		c.sized[i] = c.divisibility(&l.Modules[i])
	}
	if !c.spans() {
		return
	}
	if c.d.HasErrors() {
		return
	}
	t := &topo.Topology{Name: l.Name, Target: l.Target, WorldSize: l.WorldSize, Mode: c.mode, Cluster: l.Cluster, Batch: l.Batch, Layout: l}
	for _, m := range l.Modules {
		gm, err := c.grids.build(spec(&m), l.WorldSize)
		if err != nil {
			// The rules above mirror every check NewModule makes; reaching
			// this means they drifted apart, which must not pass silently.
			c.d.Add(diag.RuleInvalidValue, m.Pos(""), m.Name, "please report this layout to the mimoplan developers", "cannot build the module's grid: %v", err)
			return
		}
		t.Modules = append(t.Modules, gm)
	}
	copy(c.sized, t.Modules)
	c.r.Topology = t
}

func spec(m *layout.Module) grid.Spec {
	return grid.Spec{
		Name: m.Name, RankOffset: m.RankOffset, NumRanks: m.NumRanks,
		TP: m.TP, GTPRemat: m.GTPRemat, CP: m.CP, PP: m.PP,
		EP: m.EP, ExptTP: m.ExptTP, ExptGTPRemat: m.ExptGTPRemat,
	}
}

func (c *checker) language() {
	n := 0
	for _, m := range c.l.Modules {
		if m.Name == grid.LanguageModule {
			n++
		}
	}
	// Two modules named language are already a duplicate-module error.
	if n == 0 && len(c.l.Modules) > 0 {
		c.d.Add(diag.RuleMissingLanguageModule, c.l.Pos("modules"), "",
			"name the language model's module 'language'; Megatron's MIMO finds it by that name",
			"no module is named %q", grid.LanguageModule)
	}
}

// divisibility checks a module's sizes and returns them with dp derived
// (no grid yet) when they are sound, or nil.
func (c *checker) divisibility(m *layout.Module) *grid.Module {
	if m.Broken || m.NumRanks == 0 {
		return nil
	}
	sound := true
	dense := m.TP * m.GTPRemat * m.CP * m.PP
	if m.NumRanks%dense != 0 {
		c.d.Add(diag.RuleDenseNotDivisible, m.Pos("num_ranks"), m.Name,
			sizesThatDivide(m.NumRanks, []sizeKey{{"tp", m.TP}, {"gtp_remat", m.GTPRemat}, {"cp", m.CP}, {"pp", m.PP}},
				fmt.Sprintf("make num_ranks a multiple of %d (%s)", dense, multiples(dense, m.NumRanks))),
			"num_ranks %d is not divisible by tp*gtp_remat*cp*pp = %d*%d*%d*%d = %d",
			m.NumRanks, m.TP, m.GTPRemat, m.CP, m.PP, dense)
		sound = false
	}
	expert := m.ExptTP * m.EP * m.ExptGTPRemat * m.PP
	// With pp not dividing num_ranks the dense error above already says
	// so; the expert grid, sharing pp, fails for the same reason unless
	// its own sizes do not fit either.
	ownExpert := m.ExptTP * m.EP * m.ExptGTPRemat
	if m.NumRanks%expert != 0 && (sound || m.NumRanks%m.PP == 0 || m.NumRanks%ownExpert != 0) {
		c.d.Add(diag.RuleExpertNotDivisible, m.Pos(firstGiven(m, "ep", "expt_tp", "expt_gtp_remat", "pp")), m.Name,
			fmt.Sprintf("make num_ranks a multiple of %d (%s), or lower ep, expt_tp or expt_gtp_remat", expert, multiples(expert, m.NumRanks)),
			"num_ranks %d is not divisible by expt_tp*ep*expt_gtp_remat*pp = %d*%d*%d*%d = %d",
			m.NumRanks, m.ExptTP, m.EP, m.ExptGTPRemat, m.PP, expert)
		sound = false
	}
	if m.NumExperts > 0 && !expertsDivide(m.NumExperts, m.EP) {
		c.d.Add(diag.RuleExpertsNotDivisible, m.Pos("num_experts"), m.Name,
			fmt.Sprintf("each expert-parallel rank holds num_experts/ep experts: make num_experts a multiple of %d", m.EP),
			"num_experts %d is not divisible by ep %d", m.NumExperts, m.EP)
	}
	if !sound {
		return nil
	}
	return &grid.Module{Spec: spec(m), DP: m.NumRanks / dense, ExptDP: m.NumRanks / expert}
}

// multiples names the nearest multiples of k around n, for hints.
func multiples(k, n int) string {
	lo := n / k * k
	if lo == 0 {
		return fmt.Sprintf("e.g. %d", k)
	}
	return fmt.Sprintf("e.g. %d or %d", lo, lo+k)
}

// sizeKey is one factor of a module's rank count, for hints.
type sizeKey struct {
	name string
	v    int
}

// sizesThatDivide is the hint of a rank count n that the product of keys
// does not divide: for each size above 1, the values next to it that
// would divide n with the others kept, then the alternative other.
func sizesThatDivide(n int, keys []sizeKey, other string) string {
	var alts []string
	for i, k := range keys {
		if k.v <= 1 {
			continue
		}
		rest := 1
		for j, o := range keys {
			if j != i {
				rest *= o.v
			}
		}
		if n%rest != 0 {
			continue
		}
		lo, hi := nearDivisors(n/rest, k.v)
		switch {
		case hi > 0 && lo > 1:
			alts = append(alts, fmt.Sprintf("%s %d or %d", k.name, lo, hi))
		case hi > 0:
			alts = append(alts, fmt.Sprintf("%s %d", k.name, hi))
		case lo > 1:
			alts = append(alts, fmt.Sprintf("%s %d", k.name, lo))
		}
	}
	if len(alts) == 0 {
		return other + ", or change those sizes"
	}
	return "use " + strings.Join(alts, ", or ") + fmt.Sprintf(" (dividing %d), or %s", n, other)
}

// nearDivisors returns n's largest divisor below x and its smallest above
// (0 when none).
func nearDivisors(n, x int) (lo, hi int) {
	for d := 1; d*d <= n; d++ {
		if n%d != 0 {
			continue
		}
		for _, v := range []int{d, n / d} {
			if v < x && v > lo {
				lo = v
			}
			if v > x && (hi == 0 || v < hi) {
				hi = v
			}
		}
	}
	return lo, hi
}

func firstGiven(m *layout.Module, fields ...string) string {
	for _, f := range fields {
		if m.Given(f) {
			return f
		}
	}
	return "num_ranks"
}

type span struct {
	m          *layout.Module
	start, end int
	// in is the end of the part inside the world: end, or world_size for
	// a span that leaves it.
	in int
}

func (s span) String() string { return fmt.Sprintf("[%d, %d)", s.start, s.end) }

// spans checks placement. It reports false when spans are unknown (a
// module is broken or unplaced, or leaves the world), so that the topology
// is not built. Overlaps are checked on the known spans' parts inside the
// world even then.
func (c *checker) spans() bool {
	l := c.l
	if l.WorldSize == 0 {
		return false
	}
	var ss []span
	sound := true
	for i := range l.Modules {
		m := &l.Modules[i]
		if m.Broken || m.Unplaced || m.NumRanks == 0 {
			sound = false
			continue
		}
		s := span{m, m.RankOffset, m.End(), min(m.End(), l.WorldSize)}
		if s.end > l.WorldSize {
			field := "num_ranks"
			if m.Given("rank_offset") {
				field = "rank_offset"
			}
			hint := fmt.Sprintf("the world is [0, %d): lower rank_offset or num_ranks, or grow world_size", l.WorldSize)
			if !m.Given("rank_offset") {
				hint = fmt.Sprintf("rank_offset defaults to right after the previous module (%d); the world is [0, %d)", m.RankOffset, l.WorldSize)
			}
			c.d.Add(diag.RuleSpanOutOfWorld, m.Pos(field), m.Name, hint,
				"module spans ranks %v, beyond world_size %d", s, l.WorldSize)
			sound = false
		}
		if s.start < s.in {
			ss = append(ss, s)
		}
	}
	if !sound {
		c.overlaps(ss, false)
		return false
	}
	if len(ss) == 0 { // no module at all: nothing to place
		return false
	}
	same := true
	for _, s := range ss[1:] {
		if s.start != ss[0].start || s.end != ss[0].end {
			same = false
		}
	}
	if same {
		c.mode = topo.Colocated
	} else {
		c.mode = topo.NonColocated
		c.overlaps(ss, true)
	}
	if gaps, n := uncovered(ss, l.WorldSize); n > 0 {
		hint := "every rank must belong to a module: extend a module, add one, or shrink world_size"
		what := "ranks %s of the world [0, %d) belong to no module"
		if n == 1 {
			what = "rank %s of the world [0, %d) belongs to no module"
		}
		c.d.Add(diag.RuleWorldGap, l.Pos(worldKey(l)), "", hint, what, gaps, l.WorldSize)
	}
	return true
}

// overlaps reports each module whose span overlaps that of an earlier one
// (in layout order), naming the first such module: at most one diagnostic
// per module, however many spans pile up on the same ranks. Spans are
// compared on their parts inside the world. Identical spans are an error
// only when complete (every span known and inside the world) and not all
// spans are the same; otherwise they may yet be meant to be colocated.
// Disjoint spans, the common case, are told apart in O(n log n) first.
func (c *checker) overlaps(ss []span, complete bool) {
	sorted := slices.Clone(ss)
	slices.SortFunc(sorted, func(a, b span) int { return a.start - b.start })
	disjoint := true
	for i := 1; i < len(sorted) && disjoint; i++ {
		disjoint = sorted[i].start >= sorted[i-1].in
	}
	if disjoint {
		return
	}
	for j, b := range ss {
		for _, a := range ss[:j] {
			if a.in <= b.start || b.in <= a.start {
				continue
			}
			hint := "give every module the same span (colocated) or make the spans disjoint (non-colocated)"
			if a.start == b.start && a.in == b.in {
				if !complete {
					continue
				}
				c.d.Add(diag.RuleSpanOverlap, b.m.Pos("rank_offset"), b.m.Name, hint,
					"span %v is module %q's too, but other modules have other spans: modules share their ranks only when all of them do (colocated)", b, a.m.Name)
			} else {
				c.d.Add(diag.RuleSpanOverlap, b.m.Pos("rank_offset"), b.m.Name, hint,
					"span %v overlaps module %q at %v without being identical to it", b, a.m.Name, a)
			}
			break
		}
	}
}

func worldKey(l *layout.Layout) string {
	if l.Given("world_size") {
		return "world_size"
	}
	return "cluster"
}

// uncovered lists, as ranges, the ranks of [0, world) outside every span,
// and counts them.
func uncovered(ss []span, world int) (string, int) {
	sorted := slices.Clone(ss)
	slices.SortFunc(sorted, func(a, b span) int { return a.start - b.start })
	var parts []string
	next, count := 0, 0
	add := func(from, to int) { // [from, to)
		count += to - from
		if to-from == 1 {
			parts = append(parts, fmt.Sprint(from))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", from, to-1))
		}
	}
	for _, s := range sorted {
		if s.start > next {
			add(next, s.start)
		}
		next = max(next, s.end)
	}
	if next < world {
		add(next, world)
	}
	return strings.Join(parts, ", "), count
}
