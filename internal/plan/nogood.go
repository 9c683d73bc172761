package plan

import (
	"math"
	"slices"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
)

// A candidate validate refuses teaches the search what else it would
// refuse (a nogood), so that the same cause is not checked again in every
// combination of the other modules' sizes. What a refusal teaches comes
// from the rule's declared inputs (diag.Reads), of which only the
// placement and the modules' spans and sizes vary between the candidates
// of one search. A rule is remembered when those are:
//   - the placement mode alone: every placement of that mode (modeBad);
//   - the sizes and num_ranks of the module it names, and the mode: the
//     module's factorization (bad, keyed by badKey);
//   - the language module's sizes and num_ranks, and the mode (a rule
//     that names no module, such as the global batch's): the language
//     module's factorization;
//   - an encoder's dp and gtp_remat, the language module's, and the mode:
//     the pair (badPair);
//   - other sizes of an encoder (and its dp and gtp_remat), the language
//     module's dp and gtp_remat, and the mode: those sizes beside the
//     language module's lanes (badLanes; interleaved-microbatches-not-
//     divisible reads an encoder's pp and vpp and the language dp).
// Any other rule (one that reads a module's offset, every module's sizes,
// or colocated modules' memory together) is asked again for each
// candidate. A rule that reads nothing that varies refuses every
// candidate and is not remembered: the search then checks each, which
// happens only when nothing fits. This never guesses: it replays a
// verdict validate gave, on inputs the rule declares it reads, and
// validate's TestRuleReadsItsDeclaredInputs holds each rule to its
// declaration.

// nogoodKind is what a rule's refusal teaches, by its declared inputs.
type nogoodKind int

const (
	forget       nogoodKind = iota
	modeNogood              // the placement mode
	moduleNogood            // the module the diagnostic names
	langNogood              // the language module
	pairNogood              // the encoder the diagnostic names beside the language module
	lanesNogood             // sizes of the encoder the diagnostic names beside the language module's lanes
)

// sized are the inputs of a module that vary between candidates and that
// badKey holds: its ranks and sizes (not its offset).
var sized = map[string]bool{"num_ranks": true, "tp": true, "gtp_remat": true, "cp": true, "pp": true, "vpp": true, "dp": true,
	"ep": true, "expt_tp": true, "expt_gtp_remat": true}

// constant are the inputs no candidate of a search changes: the spec's
// own settings and each module's name, model and num_experts.
var constant = map[string]bool{"name": true, "num_experts": true, "model": true, "split": true, "target": true, "target_version": true,
	"world_size": true, "cluster": true, "batch": true, "training": true, "names": true}

// learnt is a rule's kindOf, memoized per kindKey; mask the sizes of the
// module it names that it reads (lanesNogood).
type learnt struct {
	kind   nogoodKind
	expert bool
	mask   sizeMask
}

type kindKey struct {
	rule      string
	colocated bool
	language  bool // the diagnostic names the language module
	named     bool // the diagnostic names a module
	// free and freeLang: the module named, and the language module, are
	// expert-free, so that their experts.* inputs are not read.
	free, freeLang bool
}

// kindOf classifies rule's refusals of a module (language: the language
// module; named: the diagnostic names one) in a placement of the given
// mode; expert reports whether the rule reads expert sizes, which the
// expert-free modules' candidates differ in (candidate.go).
func kindOf(target string, k kindKey) (kind nogoodKind, expert bool) {
	own, lang := map[string]bool{}, map[string]bool{}
	mode := false
	for _, in := range diag.Reads(diag.RuleID(k.rule), target) {
		key, isLang := strings.CutPrefix(in, diag.LanguagePrefix)
		if c, ok := strings.CutPrefix(in, diag.ColocatedPrefix); ok {
			if k.colocated {
				return forget, false // every module on the span
			}
			key = c // the module alone
		}
		if e, ok := strings.CutPrefix(key, diag.ExpertsPrefix); ok {
			if isLang && k.freeLang || !isLang && k.free {
				continue // a dense model's expert sizes are not read
			}
			key = e
		}
		switch {
		case in == diag.Placement:
			mode = true
		case constant[key]:
		case in == diag.Anything || strings.HasPrefix(in, diag.ModulesPrefix) || !sized[key]:
			return forget, false // another module's, or the offset
		case isLang || k.language:
			lang[key] = true
		default:
			own[key] = true
		}
	}
	for key := range lang {
		expert = expert || key == "expt_tp" || key == "expt_gtp_remat"
	}
	for key := range own {
		expert = expert || key == "expt_tp" || key == "expt_gtp_remat"
	}
	lanes := func(keys map[string]bool) bool {
		for key := range keys {
			if key != "dp" && key != "gtp_remat" {
				return false
			}
		}
		return true
	}
	switch {
	case len(own) == 0 && len(lang) == 0 && mode:
		return modeNogood, expert
	case len(own) == 0 && len(lang) == 0:
		return forget, false
	case len(lang) == 0 && k.named:
		return moduleNogood, expert
	case len(own) == 0:
		return langNogood, expert
	case k.named && lanes(own) && lanes(lang):
		return pairNogood, expert
	case k.named && lanes(lang):
		return lanesNogood, expert
	}
	return forget, false
}

// ownMask is the sizes of the module it names that rule reads on target
// (free: the module's model has no experts), for lanesNogood.
func ownMask(target string, k kindKey) sizeMask {
	var mask sizeMask
	for _, in := range diag.Reads(diag.RuleID(k.rule), target) {
		if strings.HasPrefix(in, diag.LanguagePrefix) {
			continue
		}
		key, _ := strings.CutPrefix(in, diag.ColocatedPrefix)
		if e, ok := strings.CutPrefix(key, diag.ExpertsPrefix); ok {
			if k.free {
				continue
			}
			key = e
		}
		mask |= sizeBits[key]
	}
	return mask
}

// lanesKey is an encoder's sizes reduced to a mask beside the language
// module's lanes.
type lanesKey struct {
	sizes             refusalKey
	colocated         bool
	langDP, langLanes int
}

func (s *searcher) lanesKey(i int, mask sizeMask) lanesKey {
	c, l := &s.cur[i], &s.cur[s.lang]
	return lanesKey{project(i, mask, c.NumRanks, &c.Sizes), s.colocated, l.DP, l.DP * l.GTPRemat}
}

type pairKey struct {
	enc               int
	colocated         bool
	encDP, encGTP     int
	langDP, langLanes int
}

// deadKey is an encoder on n ranks beside the language module's dp and
// lanes: dead when every factorization of it is over memory or refused.
type deadKey struct {
	module, n         int
	colocated         bool
	langDP, langLanes int
}

func (s *searcher) deadKey(i, n int) deadKey {
	l := &s.cur[s.lang]
	return deadKey{i, n, s.colocated, l.DP, l.DP * l.GTPRemat}
}

func (s *searcher) markDead(i, n int) { // Invariant 3
	s.dead.put(s.deadKey(i, n), true, 1)
}

// deadAhead reports whether a module after position p of the order is
// dead beside the language module as chosen now.
func (s *searcher) deadAhead(p int, n []int) bool {
	if s.lang < 0 || s.dead.n == 0 {
		return false
	}
	for _, i := range s.order[p+1:] {
		if dead, _ := s.dead.get(s.deadKey(i, n[i])); dead {
			return true
		}
	}
	return false
}

type badKey struct {
	module    int
	colocated bool
	n         int
	z         Sizes
}

// learn records what the diagnostics of a refused candidate (the current
// choice, with the first expert sizes of its expert-free modules) teach
// about its modules' sizes. A module's search entry stands for all the
// expert sizes of an expert-free module (candidate.go), so a rule that reads
// them teaches nothing about such a module: whatever is learned holds for
// the candidate's other expert sizes too.
func (s *searcher) learn(d *diag.List) { // Invariant 3
	for _, x := range d.Items {
		if x.Severity != diag.Error || s.lang < 0 && x.Module == "" {
			continue
		}
		i := s.index(x.Module)
		k := kindKey{rule: x.Rule, colocated: s.colocated, language: i >= 0 && i == s.lang, named: i >= 0}
		if i >= 0 {
			k.free = s.free[i]
		}
		if s.lang >= 0 {
			k.freeLang = s.free[s.lang]
		}
		c, ok := s.kinds[k]
		if !ok {
			c.kind, c.expert = kindOf(string(s.spec.Target), k)
			if c.kind == lanesNogood {
				c.mask = ownMask(string(s.spec.Target), k)
			}
			s.kinds[k] = c
		}
		switch c.kind {
		case modeNogood:
			s.modeBad[col(s.colocated)] = true
		case moduleNogood:
			if !(c.expert && s.free[i]) {
				s.markBad(i)
			}
		case langNogood:
			if s.lang >= 0 && !(c.expert && s.free[s.lang]) {
				s.markBad(s.lang)
			}
		case pairNogood:
			if s.lang >= 0 && i != s.lang {
				s.badPair[s.pair(i)] = true
			}
		case lanesNogood:
			if s.lang >= 0 && i != s.lang {
				s.badLanes[s.lanesKey(i, c.mask)] = true
				if !slices.Contains(s.laneMasks[i], c.mask) {
					s.laneMasks[i] = append(s.laneMasks[i], c.mask)
				}
			}
		}
	}
}

func (s *searcher) index(name string) int {
	for i := range s.spec.Modules {
		if name != "" && s.spec.Modules[i].Name == name {
			return i
		}
	}
	return -1
}

func (s *searcher) markBad(i int) {
	c := &s.cur[i]
	s.bad[badKey{i, s.colocated, c.NumRanks, c.Sizes}] = true
	s.badAt[[2]int{i, c.NumRanks}] = true
	s.curE[i].bad[col(s.colocated)] = true
	if f, ok := s.bfacts.get([2]int{i, c.NumRanks}); ok {
		for j := range f.es {
			if f.es[j].z == c.Sizes {
				f.es[j].bad[col(s.colocated)] = true
			}
		}
	}
	s.gen[[2]int{i, c.NumRanks}]++ // the lbAt known of i on these ranks are stale
	if s.lbs != nil && s.lbs[i] != nil && !math.IsNaN(s.lbs[i][c.NumRanks]) {
		// lbFull leaves out what is refused. Recomputed now, so that a
		// known bound never falls (bestFirst's bands rely on it).
		s.lbs[i][c.NumRanks] = math.NaN()
		s.lbFull(i, c.NumRanks) // Invariant 7
	}
}

func col(colocated bool) int {
	if colocated {
		return 1
	}
	return 0
}

// pair is the key of encoder i and the language module as chosen now.
func (s *searcher) pair(i int) pairKey {
	e, l := &s.cur[i], &s.cur[s.lang]
	return pairKey{i, s.colocated, e.DP, e.GTPRemat, l.DP, l.DP * l.GTPRemat}
}

// isBad reports whether module i's current sizes were refused before.
func (s *searcher) isBad(i int) bool {
	if s.modeBad[col(s.colocated)] {
		return true
	}
	if s.curE[i].bad[col(s.colocated)] {
		return true
	}
	// The language module is chosen first: an encoder's pair with it is
	// known.
	if i == s.lang || s.lang < 0 {
		return false
	}
	if s.badPair[s.pair(i)] {
		return true
	}
	for _, m := range s.laneMasks[i] {
		if s.badLanes[s.lanesKey(i, m)] {
			return true
		}
	}
	return false
}

// anyBad reports whether a module chosen before position p is refused.
func (s *searcher) anyBad(p int) bool {
	for _, i := range s.order[:p] {
		if s.isBad(i) {
			return true
		}
	}
	return false
}
