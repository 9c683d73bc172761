package plan

import (
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
)

// A refusal by the model's own rules (Estimator.Accepts) is remembered
// under the sizes its rule declares it reads (diag.Reads), as nogood.go
// remembers validate's: heads-not-divisible refuses a tp whatever the cp,
// pp and dp, layers-not-divisible a pp and vpp whatever the rest. The
// enumeration (space.go) then leaves out every factorization holding those
// sizes before it is listed, at the loop that sets the last of them, so
// that a module's factorizations of any number of ranks cost what the
// model accepts, not every divisor triple (docs/performance.md). This
// never guesses: validate runs the same rule on the module, which reports
// it for every layout holding those sizes by its declaration (validate's
// TestRuleReadsItsDeclaredInputs holds each rule to it), so what is left
// out validate refuses (Invariant 2).

// sizeMask is a set of a module's sizes, num_ranks among them.
type sizeMask uint16

const (
	bitRanks sizeMask = 1 << iota
	bitTP
	bitGTP
	bitCP
	bitPP
	bitDP
	bitVPP
	bitEP
	bitETP
	bitEGTP
)

// sizeBits are the module keys of diag.Reads' vocabulary that are sizes.
var sizeBits = map[string]sizeMask{"num_ranks": bitRanks, "tp": bitTP, "gtp_remat": bitGTP, "cp": bitCP, "pp": bitPP, "dp": bitDP,
	"vpp": bitVPP, "ep": bitEP, "expt_tp": bitETP, "expt_gtp_remat": bitEGTP}

// The enumeration's levels: the sizes set once each loop of factorizations
// has chosen its value (dp with pp, from the rest).
const (
	levelTP   = bitRanks | bitTP
	levelGTP  = levelTP | bitGTP
	levelCP   = levelGTP | bitCP
	levelPP   = levelCP | bitPP | bitDP
	levelVPP  = levelPP | bitVPP
	levelEP   = levelVPP | bitEP
	levelETP  = levelEP | bitETP
	levelEGTP = levelETP | bitEGTP
)

// ruleNamer is an Estimator that says which of the model's rules refuse
// sizes (their ids): Accepts is true when none does.
type ruleNamer interface {
	RefusedBy(spec *layout.Layout, m *layout.Module, c *Choice) []string
}

// refusalKey is a module's sizes reduced to a mask.
type refusalKey struct {
	module int32
	mask   sizeMask
	n      int32
	z      [9]int32 // tp, gtp_remat, cp, pp, dp, vpp, ep, expt_tp, expt_gtp_remat
}

// project keeps of z and n the sizes in mask.
func project(module int, mask sizeMask, n int, z *Sizes) refusalKey {
	k := refusalKey{module: int32(module), mask: mask}
	if mask&bitRanks != 0 {
		k.n = int32(n)
	}
	for j, v := range [9]int{z.TP, z.GTPRemat, z.CP, z.PP, z.DP, z.VPP, z.EP, z.ExptTP, z.ExptGTPRemat} {
		if mask&(bitTP<<j) != 0 {
			k.z[j] = int32(v)
		}
	}
	return k
}

// refusals are the model's refusals by the sizes their rules read.
type refusals struct {
	set map[refusalKey]bool
	// masks are each module's masks learned so far; kinds each rule's
	// mask (ok false: its inputs are not the module's sizes and
	// constants).
	masks [][]sizeMask
	kinds map[[2]any]ruleMask
}

type ruleMask struct {
	mask sizeMask
	ok   bool
}

// maskOf is the sizes rule reads of a module, if everything else it reads
// is the same in every candidate of a search (nogood.go's constant);
// free: the module's model has no experts, whose expert sizes it ignores.
func maskOf(rule, target string, free bool) (sizeMask, bool) {
	var mask sizeMask
	for _, in := range diag.Reads(diag.RuleID(rule), target) {
		key := in
		if e, ok := strings.CutPrefix(in, diag.ExpertsPrefix); ok {
			if free {
				continue
			}
			key = e
		}
		if b, ok := sizeBits[key]; ok {
			mask |= b
			continue
		}
		if !constant[key] {
			return 0, false
		}
	}
	return mask, true
}

// learnRefusal records why module i's sizes z on n ranks were refused: the
// ids of the model's rules that refused them.
func (s *searcher) learnRefusal(i, n int, z *Sizes, rules []string) {
	r := &s.refused
	if r.set == nil {
		r.set, r.masks, r.kinds = map[refusalKey]bool{}, make([][]sizeMask, len(s.spec.Modules)), map[[2]any]ruleMask{}
	}
	for _, rule := range rules {
		k := [2]any{rule, s.free[i]}
		rm, seen := r.kinds[k]
		if !seen {
			rm.mask, rm.ok = maskOf(rule, string(s.spec.Target), s.free[i])
			r.kinds[k] = rm
		}
		if !rm.ok || rm.mask == 0 {
			continue // a rule on constants alone refuses every size: nothing to prune by
		}
		r.set[project(i, rm.mask, n, z)] = true
		known := false
		for _, m := range r.masks[i] {
			known = known || m == rm.mask
		}
		if !known {
			r.masks[i] = append(r.masks[i], rm.mask)
		}
	}
}

// refusedAt reports whether module i's sizes z on n ranks, set up to
// level, hold sizes a rule of the model refused, by a mask the previous
// level (prev) did not yet cover.
func (s *searcher) refusedAt(i int, prev, level sizeMask, n int, z Sizes) bool {
	if s.refused.set == nil || !s.pruning() {
		return false
	}
	for _, m := range s.refused.masks[i] {
		if m&level == m && m&prev != m && s.refused.set[project(i, m, n, &z)] {
			return true
		}
	}
	return false
}

// laneCut is refusedAt for module i's cores (coresOf): a core's sizes
// not cut yet are asked of the model (Accepts) with the sizes still
// unset at 1, once, so that a rule that reads only those set refuses them
// before they multiply into every number of ranks. The other sizes' 1 is
// a size like any other: what the answer teaches holds by the rule's
// declaration, as for any candidate.
func (s *searcher) laneCut(i int) laneCut {
	if !s.pruning() {
		return laneCut{}
	}
	m := &s.spec.Modules[i]
	return laneCut{final: true, cut: func(prev, level sizeMask, z Sizes) bool {
		if s.refusedAt(i, prev, level, 0, z) {
			return true
		}
		for _, p := range []*int{&z.TP, &z.GTPRemat, &z.CP, &z.PP, &z.VPP, &z.DP, &z.EP, &z.ExptTP, &z.ExptGTPRemat} {
			*p = max(*p, 1)
		}
		c := Choice{Name: m.Name, NumRanks: z.TP * z.GTPRemat * z.CP * z.PP, Sizes: z}
		return !s.accepts(i, &c) && s.refusedAt(i, prev, level, 0, z)
	}}
}

// pruning reports whether the enumeration may leave refused sizes out:
// not while the model's refusals may still be shown (ruleMisses, filled by
// the first ones Accepts meets while nothing fits), so that those stay the
// ones the full enumeration meets first.
func (s *searcher) pruning() bool {
	return !s.explains || len(s.kept) > 0 || len(s.ruleMisses) >= maxMisses
}

// RefusedBy is Accepts' rules: the ids of the model's rules (model.Rules)
// that refuse the sizes of c, errors only.
func (Model) RefusedBy(spec *layout.Layout, m *layout.Module, c *Choice) []string {
	if m.Model == nil {
		return nil
	}
	var out []string
	for _, r := range model.Rules(m.Model.Config, parallel(m, c), spec.ModelTraining(m, c.DP)) {
		if diag.SeverityOf(diag.RuleID(r)) == diag.Error {
			out = append(out, r)
		}
	}
	return out
}
