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

var one = []int{1}

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

// values returns the values a size may take: the given one when the spec
// fixes it, 1 when it stays closed, else the divisors of n accepted by ok.
func values(c divCache, m *layout.Module, field string, fixed int, open bool, n int, ok func(int) bool) []int {
	if m.Given(field) {
		if n%fixed == 0 && (ok == nil || ok(fixed)) {
			return []int{fixed}
		}
		return nil
	}
	if !open {
		return one
	}
	if ok == nil {
		return c.divisors(n)
	}
	var out []int
	for _, d := range c.divisors(n) {
		if ok == nil || ok(d) {
			out = append(out, d)
		}
	}
	return out
}

// factorizations lists every Sizes of spec module m on n ranks that meets
// the divisibility Megatron's ModuleGridSpec requires (n divisible by
// tp*gtp_remat*cp*pp and by expt_tp*ep*expt_gtp_remat*pp), the spec's fixed
// sizes and max_tp. These are necessary conditions only: validate still
// decides. lanes, when not nil, leaves out the dp and gtp_remat it refuses
// before the expert sizes are listed; base keeps only the first expert
// sizes of each (expertSizes lists the others).
func factorizations(c divCache, m *layout.Module, n int, opt Options, lanes func(dp, gtp int) bool, base bool) []Sizes { // Invariant 1
	var out []Sizes
	maxTP := func(t int) bool { return m.MaxTP == 0 || t <= m.MaxTP }
	epOK := func(ep int) bool { return validate.ExpertParallelOK(m, ep) }
	for _, tp := range values(c, m, "tp", m.TP, true, n, maxTP) {
		for _, gtp := range values(c, m, "gtp_remat", m.GTPRemat, opt.GTP, n/tp, nil) {
			for _, cp := range values(c, m, "cp", m.CP, true, n/(tp*gtp), nil) {
				for _, pp := range values(c, m, "pp", m.PP, true, n/(tp*gtp*cp), nil) {
					dp := n / (tp * gtp * cp * pp)
					if m.Given("dp") && m.DP != dp || lanes != nil && !lanes(dp, gtp) {
						continue
					}
					for _, vpp := range vppValues(m, pp) {
						for _, ep := range values(c, m, "ep", m.EP, true, n/pp, epOK) {
							var ex [][2]int
							if base {
								if x, ok := firstExpert(c, m, n, pp, ep, opt); ok {
									ex = [][2]int{x}
								}
							} else {
								ex = expertSizes(c, m, n, pp, ep, opt)
							}
							for _, x := range ex {
								out = append(out, Sizes{TP: tp, GTPRemat: gtp, CP: cp, PP: pp, VPP: vpp, DP: dp, EP: ep, ExptTP: x[0], ExptGTPRemat: x[1]})
							}
						}
					}
				}
			}
		}
	}
	return out
}

// expertSizes lists the (expt_tp, expt_gtp_remat) of m on n ranks with pp
// and ep, in the order of less: expt_tp first, each ascending.
func expertSizes(c divCache, m *layout.Module, n, pp, ep int, opt Options) [][2]int {
	var out [][2]int
	for _, etp := range values(c, m, "expt_tp", m.ExptTP, true, n/(pp*ep), nil) {
		for _, egtp := range values(c, m, "expt_gtp_remat", m.ExptGTPRemat, opt.GTP, n/(pp*ep*etp), nil) {
			out = append(out, [2]int{etp, egtp})
		}
	}
	return out
}

// firstExpert is expertSizes' first, without listing the others.
func firstExpert(c divCache, m *layout.Module, n, pp, ep int, opt Options) ([2]int, bool) {
	for _, etp := range values(c, m, "expt_tp", m.ExptTP, true, n/(pp*ep), nil) {
		if g := values(c, m, "expt_gtp_remat", m.ExptGTPRemat, opt.GTP, n/(pp*ep*etp), nil); len(g) > 0 {
			return [2]int{etp, g[0]}, true
		}
	}
	return [2]int{}, false
}

// vppValues are the vpp sizes of module m with pp stages: the spec's
// when it gives one, else those validate's rules allow
// (validate.VPPValues).
func vppValues(m *layout.Module, pp int) []int {
	if m.Given("vpp") {
		return []int{max(m.VPP, 1)}
	}
	return validate.VPPValues(m, pp)
}
