package plan

import (
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// Sizes are one module's parallel sizes. VPP 0 means none.
type Sizes struct {
	TP           int `json:"tp" yaml:"tp"`
	GTPRemat     int `json:"gtp_remat" yaml:"gtp_remat"`
	CP           int `json:"cp" yaml:"cp"`
	PP           int `json:"pp" yaml:"pp"`
	VPP          int `json:"vpp" yaml:"vpp"`
	DP           int `json:"dp" yaml:"dp"`
	EP           int `json:"ep" yaml:"ep"`
	ExptTP       int `json:"expt_tp" yaml:"expt_tp"`
	ExptGTPRemat int `json:"expt_gtp_remat" yaml:"expt_gtp_remat"`
}

// Choice is one module of a candidate: where it sits and how it splits.
type Choice struct {
	Name       string `json:"name" yaml:"name"`
	RankOffset int    `json:"rank_offset" yaml:"rank_offset"`
	NumRanks   int    `json:"num_ranks" yaml:"num_ranks"`
	Sizes      `yaml:",inline"`
}

// Options are what the spec does not say.
type Options struct {
	// GTP opens gtp_remat and expt_gtp_remat where the spec leaves them
	// out; otherwise they are 1.
	GTP bool
}

// divisors lists the divisors of n in increasing order.
func divisors(n int) []int {
	var lo, hi []int
	for d := 1; d*d <= n; d++ {
		if n%d == 0 {
			lo = append(lo, d)
			if d != n/d {
				hi = append(hi, n/d)
			}
		}
	}
	for i := len(hi) - 1; i >= 0; i-- {
		lo = append(lo, hi[i])
	}
	return lo
}

// divCache memoizes divisors (nil: none); its slices are shared, never
// changed.
type divCache map[int][]int

func (c divCache) divisors(n int) []int {
	if c == nil {
		return divisors(n)
	}
	d, ok := c[n]
	if !ok {
		d = divisors(n)
		c[n] = d
	}
	return d
}

// dim is one size of a module as the spec states it, looked up once: the
// spec's value when given, else closed (1) or open (any divisor).
type dim struct {
	given bool
	fixed int
	open  bool
	only  []int // the given value, or 1 when closed
}

func dimOf(m *layout.Module, field string, fixed int, open bool) dim {
	d := dim{given: m.Given(field), fixed: fixed, open: open, only: []int{1}}
	if d.given {
		d.only = []int{fixed}
	}
	return d
}

// allows reports whether the size may be v: the given one, 1 when closed,
// any when open.
func (d dim) allows(v int) bool {
	switch {
	case d.given:
		return v == d.fixed
	case !d.open:
		return v == 1
	}
	return true
}

// space is what the enumeration reads of one spec module, looked up once
// per search: its sizes as the spec states them, max_tp, and the ep and
// vpp values validate allows (memoized: they read the model).
type space struct {
	m                             *layout.Module
	tp, gtp, cp, pp, ep, etp, egt dim
	dp                            dim
	vpp                           map[int][]int // by pp
	eps                           map[int][]int // by ranks a stage (epValues)
	cores                         map[int]lanes // by ranks a lane (coresOf)
	// ranks and offset: the spec gives num_ranks, rank_offset.
	ranks, offset bool
}

func newSpace(m *layout.Module, opt Options) *space {
	return &space{m: m,
		tp: dimOf(m, "tp", m.TP, true), gtp: dimOf(m, "gtp_remat", m.GTPRemat, opt.GTP), cp: dimOf(m, "cp", m.CP, true),
		pp: dimOf(m, "pp", m.PP, true), ep: dimOf(m, "ep", m.EP, true), etp: dimOf(m, "expt_tp", m.ExptTP, true),
		egt: dimOf(m, "expt_gtp_remat", m.ExptGTPRemat, opt.GTP), dp: dimOf(m, "dp", m.DP, true),
		vpp: map[int][]int{}, eps: map[int][]int{}, cores: map[int]lanes{}, ranks: m.Given("num_ranks"), offset: m.Given("rank_offset")}
}

// values are the values d may take on n ranks, ascending: the given one
// when the spec fixes it (none when it does not divide n), 1 when it stays
// closed, else the divisors of n. Shared, never changed.
func (c divCache) values(d dim, n int) []int {
	switch {
	case d.given:
		if n%d.fixed != 0 {
			return nil
		}
		return d.only
	case !d.open:
		return d.only
	}
	return c.divisors(n)
}

// epValues are the ep values on n ranks a stage that validate allows
// (validate.ExpertParallelOK), memoized.
func (sp *space) epValues(c divCache, n int) []int {
	if v, ok := sp.eps[n]; ok {
		return v
	}
	var v []int
	for _, ep := range c.values(sp.ep, n) {
		if validate.ExpertParallelOK(sp.m, ep) {
			v = append(v, ep)
		}
	}
	sp.eps[n] = v
	return v
}

// factorizations lists every Sizes of spec module m (sp) on n ranks that
// meets the divisibility Megatron's ModuleGridSpec requires (n divisible by
// tp*gtp_remat*cp*pp and by expt_tp*ep*expt_gtp_remat*pp), the spec's fixed
// sizes and max_tp. These are necessary conditions only: validate still
// decides. lanes, when not nil, leaves out the dp and gtp_remat it refuses
// before the expert sizes are listed; base keeps only the first expert
// sizes of each (expertSizes lists the others); refused, when not nil,
// leaves out the sizes the model refused (refusal.go) at the loop that
// sets the last of them (prev: the sizes set before it, level: with it).
func factorizations(c divCache, sp *space, n int, lanes func(dp, gtp int) bool, base bool, refused func(prev, level sizeMask, z Sizes) bool) []Sizes { // Invariant 1
	var out []Sizes
	cut := func(prev, level sizeMask, z Sizes) bool { return refused != nil && refused(prev, level, z) }
	for _, tp := range c.values(sp.tp, n) {
		if !sp.maxTP(tp) || cut(bitRanks, levelTP, Sizes{TP: tp}) {
			continue
		}
		for _, gtp := range c.values(sp.gtp, n/tp) {
			if cut(levelTP, levelGTP, Sizes{TP: tp, GTPRemat: gtp}) {
				continue
			}
			for _, cp := range c.values(sp.cp, n/(tp*gtp)) {
				if cut(levelGTP, levelCP, Sizes{TP: tp, GTPRemat: gtp, CP: cp}) {
					continue
				}
				for _, pp := range c.values(sp.pp, n/(tp*gtp*cp)) {
					dp := n / (tp * gtp * cp * pp)
					if sp.dp.given && sp.dp.fixed != dp || lanes != nil && !lanes(dp, gtp) {
						continue
					}
					if cut(levelCP, levelPP, Sizes{TP: tp, GTPRemat: gtp, CP: cp, PP: pp, DP: dp}) {
						continue
					}
					for _, vpp := range sp.vppValues(pp) {
						if z := (Sizes{TP: tp, GTPRemat: gtp, CP: cp, PP: pp, VPP: vpp, DP: dp}); !cut(levelPP, levelVPP, z) {
							out = sp.withExperts(c, n, z, base, refused, out)
						}
					}
				}
			}
		}
	}
	return out
}

// withExperts appends to out z with each ep, and each expert size (the
// first alone when base), that the spec allows on n ranks and refused
// does not cut.
func (sp *space) withExperts(c divCache, n int, z Sizes, base bool, refused func(prev, level sizeMask, z Sizes) bool, out []Sizes) []Sizes {
	for _, ep := range sp.epValues(c, n/z.PP) {
		z.EP = ep
		if refused != nil && refused(levelVPP, levelEP, z) {
			continue
		}
		if base {
			if x, ok := firstExpert(c, sp, n, z.PP, ep); ok {
				z.ExptTP, z.ExptGTPRemat = x[0], x[1]
				if refused == nil || !refused(levelEP, levelEGTP, z) {
					out = append(out, z)
				}
			}
			continue
		}
		for _, x := range expertSizes(c, sp, n, z.PP, ep) {
			z.ExptTP, z.ExptGTPRemat = x[0], x[1]
			if refused == nil || !refused(levelEP, levelEGTP, z) {
				out = append(out, z)
			}
		}
	}
	return out
}

// core is a module's sizes within one data lane: tp*gtp_remat*cp*pp
// ranks, and vpp. 32-bit (a size is at most the world size, 2^24): each
// module keeps the cores of every lane size, a million on 16,384 GPUs.
type core struct{ tp, gtp, cp, pp, vpp int32 }

// laneBits are the sizes of a core.
const laneBits = bitTP | bitGTP | bitCP | bitPP | bitVPP

// boundFactorizations is factorizations in another order: for each
// divisor p of n (the ranks of a data lane), the cores of p, each with dp
// n/p. The cores of p are listed once (coresOf, with lane, which may ask
// the model about them), so that a module's factorizations of every number
// of ranks, which the bounds read, cost what the model accepts.
func boundFactorizations(c divCache, sp *space, n int, lanes func(dp, gtp int) bool, base bool, refused func(prev, level sizeMask, z Sizes) bool, lane laneCut) []Sizes { // Invariant 1
	var out []Sizes
	for _, p := range c.divisors(n) {
		dp := n / p
		if sp.dp.given && sp.dp.fixed != dp {
			continue
		}
		for _, co := range sp.coresOf(c, p, lane) {
			if lanes != nil && !lanes(dp, int(co.gtp)) {
				continue
			}
			z := Sizes{TP: int(co.tp), GTPRemat: int(co.gtp), CP: int(co.cp), PP: int(co.pp), VPP: int(co.vpp), DP: dp}
			// What coresOf could not cut: refusals that read num_ranks or dp.
			if refused != nil && refused(laneBits, levelVPP, z) {
				continue
			}
			out = sp.withExperts(c, n, z, base, refused, out)
		}
	}
	return out
}

// laneCut reports whether a core's sizes set up to level (prev: before
// the last) hold some the model refuses; final says whether its answer
// may still change (it may learn more later), so that a list it cut is
// kept only once final.
type laneCut struct {
	cut   func(prev, level sizeMask, z Sizes) bool
	final bool
}

// lanes are a memoized list of cores; final as laneCut's.
type lanes struct {
	cs    []core
	final bool
}

// coresOf lists the cores on p ranks that the spec's sizes and max_tp
// allow, leaving out those lane cuts, memoized once lane is final.
func (sp *space) coresOf(c divCache, p int, lane laneCut) []core {
	if l, ok := sp.cores[p]; ok && (l.final || !lane.final) {
		return l.cs
	}
	cs := []core{}
	cut := func(prev, level sizeMask, z Sizes) bool { return lane.cut != nil && lane.cut(prev, level, z) }
	for _, tp := range c.values(sp.tp, p) {
		if !sp.maxTP(tp) || cut(0, bitTP, Sizes{TP: tp}) {
			continue
		}
		for _, gtp := range c.values(sp.gtp, p/tp) {
			if cut(bitTP, bitTP|bitGTP, Sizes{TP: tp, GTPRemat: gtp}) {
				continue
			}
			for _, cp := range c.values(sp.cp, p/(tp*gtp)) {
				pp := p / (tp * gtp * cp)
				if !sp.pp.allows(pp) || cut(bitTP|bitGTP, bitTP|bitGTP|bitCP, Sizes{TP: tp, GTPRemat: gtp, CP: cp}) ||
					cut(bitTP|bitGTP|bitCP, laneBits&^bitVPP, Sizes{TP: tp, GTPRemat: gtp, CP: cp, PP: pp}) {
					continue
				}
				for _, vpp := range sp.vppValues(pp) {
					if !cut(laneBits&^bitVPP, laneBits, Sizes{TP: tp, GTPRemat: gtp, CP: cp, PP: pp, VPP: vpp}) {
						cs = append(cs, core{int32(tp), int32(gtp), int32(cp), int32(pp), int32(vpp)})
					}
				}
			}
		}
	}
	sp.cores[p] = lanes{cs, lane.final}
	return cs
}

// expertSizes lists the (expt_tp, expt_gtp_remat) of m on n ranks with pp
// and ep, in the order of less: expt_tp first, each ascending.
func expertSizes(c divCache, sp *space, n, pp, ep int) [][2]int {
	var out [][2]int
	for _, etp := range c.values(sp.etp, n/(pp*ep)) {
		for _, egtp := range c.values(sp.egt, n/(pp*ep*etp)) {
			out = append(out, [2]int{etp, egtp})
		}
	}
	return out
}

// firstExpert is expertSizes' first, without listing the others.
func firstExpert(c divCache, sp *space, n, pp, ep int) ([2]int, bool) {
	for _, etp := range c.values(sp.etp, n/(pp*ep)) {
		if g := c.values(sp.egt, n/(pp*ep*etp)); len(g) > 0 {
			return [2]int{etp, g[0]}, true
		}
	}
	return [2]int{}, false
}

// vppValues are the vpp sizes of the module with pp stages: the spec's
// when it gives one, else those validate's rules allow
// (validate.VPPValues), memoized.
func (sp *space) vppValues(pp int) []int {
	if v, ok := sp.vpp[pp]; ok {
		return v
	}
	v := []int{max(sp.m.VPP, 1)}
	if !sp.m.Given("vpp") {
		v = validate.VPPValues(sp.m, pp)
	}
	sp.vpp[pp] = v
	return v
}

func (sp *space) maxTP(t int) bool { return sp.m.MaxTP == 0 || t <= sp.m.MaxTP }
