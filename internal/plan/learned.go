package plan

import (
	"math"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// A candidate validate refuses teaches the search what else it would
// refuse, so that the same cause is not checked again in every
// combination of the other modules' sizes. Only rules whose verdict reads
// nothing but one module's sizes, the target and whether the placement is
// colocated are learned (docs/rules.md gives each rule's inputs); every
// other rule is asked again for each candidate.
var (
	// moduleRules are refused for a module's sizes in a placement mode.
	moduleRules = map[string]bool{
		"bridge-cp-unsupported":           true, // cp of a module joined by BridgeCommunicator
		"colocated-pp-cp-unsupported":     true, // pp or cp of a colocated module
		"cp-unsupported":                  true, // cp, megatron-lm
		"encoder-parallelism-unsupported": true, // an encoder's pp, ep, expt_tp, gtp sizes, megatron-lm
		"encoder-not-dense":               true, // an encoder's ep, expt_tp, megatron-bridge
		"tp-not-power-of-two":             true, // tp, megatron-bridge
		"gtp-unsupported":                 true, // gtp sizes, megatron-bridge
		"micro-batch-not-divisible":       true, // micro_batch_size % dp, megatron-bridge
	}
	// pairRules read an encoder's dp and gtp_remat, the language module's,
	// and the batch.
	pairRules = map[string]bool{
		"fanout-not-divisible":         true, // mbs * language lanes % encoder dp
		"bridge-leaders-not-divisible": true, // encoder lanes and language lanes
	}
	// languageRules read the language module's sizes, the batch and the
	// training options: the global batch in whole steps of its lanes
	// (core, megatron-lm), its own memory.
	languageRules = map[string]bool{
		"global-batch-not-divisible": true,
		"gpu-memory-short":           true,
	}
	// modeRules refuse every colocated placement of the spec.
	modeRules = map[string]bool{"colocated-unsupported": true}
)

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

func (s *searcher) markDead(i, n int) {
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
// choice) say about its modules' sizes.
func (s *searcher) learn(d *diag.List) {
	for _, x := range d.Items {
		if x.Severity != diag.Error {
			continue
		}
		if modeRules[x.Rule] && s.colocated {
			s.colocatedBad = true
		}
		i := s.index(x.Module)
		switch {
		case moduleRules[x.Rule] && i >= 0:
			s.markBad(i)
		case languageRules[x.Rule] && s.lang >= 0 && (x.Module == "language" ||
			x.Module == "" && x.Rule == "global-batch-not-divisible" && s.spec.Target != layout.TargetMegatronBridge):
			s.markBad(s.lang)
		case pairRules[x.Rule] && i >= 0 && i != s.lang && s.lang >= 0:
			s.badPair[s.pair(i)] = true
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
	s.curE[i].bad[col(s.colocated)] = true
	if f, ok := s.bfacts.get([2]int{i, c.NumRanks}); ok {
		for j := range f.es {
			if f.es[j].z == c.Sizes {
				f.es[j].bad[col(s.colocated)] = true
			}
		}
	}
	s.lbAts.reset()
	if s.lbs != nil && s.lbs[i] != nil && !math.IsNaN(s.lbs[i][c.NumRanks]) {
		// lbFull leaves out what is refused. Recomputed now, so that a
		// known bound never falls (bestFirst's bands rely on it).
		s.lbs[i][c.NumRanks] = math.NaN()
		s.lbFull(i, c.NumRanks)
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
	if s.colocated && s.colocatedBad {
		return true
	}
	if s.curE[i].bad[col(s.colocated)] {
		return true
	}
	// The language module is chosen first: an encoder's pair with it is
	// known.
	return i != s.lang && s.lang >= 0 && s.badPair[s.pair(i)]
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
