package plan

import (
	"fmt"
	"math"
	"slices"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// The colocated placement's own refusals: the modules' memory together
// (gpu-memory-short of colocated modules) and colocated-pp-cp-unsupported.
// Their rules read every colocated module's sizes, so nogood.go learns
// nothing from them; they are decided here before validate, from the
// rules' own conditions.

// sharedOver reports whether the colocated modules chosen up to position
// p, beside the least memory any factorization of each later one may
// have, need more than gpu_memory together as validate counts it
// (validate.SharedBytes, from each module's lower bound): then validate
// refuses every candidate with these choices (gpu-memory-short).
func (s *searcher) sharedOver(p int) bool {
	if !s.colocated || s.req.GPUMemory <= 0 {
		return false
	}
	if s.exactShared() {
		return s.sharedOverExact(p)
	}
	each := s.shared[:0]
	for q, i := range s.order {
		if q <= p {
			if e := s.curE[i]; e.mem > 0 {
				each = append(each, e.mem)
			}
			continue
		}
		if b, ok := s.leastBytes(i, s.cur[i].NumRanks); ok {
			each = append(each, b)
		}
	}
	s.shared = each
	return len(each) > 1 && validate.SharedBytes(each...) > s.req.GPUMemory
}

// colocatedRefused reports whether validate refuses, by
// colocated-pp-cp-unsupported, every colocated candidate with the modules
// chosen up to position p as they are (validate.ColocatedPPOK and
// ColocatedCPOK, the rule's own conditions; its refusals read other
// modules' sizes, so they are not learnt as nogoods). While nothing fits
// it records them as a miss.
func (s *searcher) colocatedRefused(p int) bool {
	if !s.colocated || len(s.order) < 2 {
		return false // a module alone has no communicator
	}
	ms, lang := s.colo[:0], -1
	ppOK := true
	for _, i := range s.order[:p+1] {
		if i == s.lang {
			lang = len(ms)
		}
		z := s.cur[i].Sizes
		ppOK = ppOK && validate.ColocatedPPOK(z.PP)
		ms = append(ms, validate.ColocatedSizes{TP: z.TP, GTPRemat: z.GTPRemat, CP: z.CP, PP: z.PP, DP: z.DP, EP: z.EP, ExptTP: z.ExptTP, ExptGTPRemat: z.ExptGTPRemat})
	}
	s.colo = ms
	cpOK := validate.ColocatedCPOK(ms, lang)
	if ppOK && cpOK {
		return false
	}
	s.colocatedMiss(p, cpOK)
	return true
}

// colocatedMiss records, while nothing fits, the modules chosen up to
// position p that colocatedRefused refuses, with the rule's messages about
// each (a few: one example of each cause is enough).
func (s *searcher) colocatedMiss(p int, cpOK bool) {
	if len(s.kept) > 0 || s.coloMisses == maxMisses {
		return
	}
	s.coloMisses++
	var mods []Choice
	var blocks []string
	for i := range s.spec.Modules {
		if !slices.Contains(s.order[:p+1], i) {
			continue
		}
		c := s.cur[i]
		mods = append(mods, c)
		if !validate.ColocatedPPOK(c.PP) {
			blocks = append(blocks, fmt.Sprintf("%s (%s): %s", diag.RuleColocatedPPCPUnsupported, c.Name, validate.ColocatedPPText(c.PP)))
		}
		if c.CP != 1 && !cpOK {
			blocks = append(blocks, fmt.Sprintf("%s (%s): %s", diag.RuleColocatedPPCPUnsupported, c.Name, validate.ColocatedCPText(c.CP)))
		}
	}
	s.miss(mods, 0, blocks...)
}

// leastBytes is the least memory lower bound of module i's factorizations
// of n ranks that may fit; false when it has no model or none fits.
func (s *searcher) leastBytes(i, n int) (float64, bool) {
	key := [2]int{i, n}
	if b, ok := s.least[key]; ok {
		return b, !math.IsNaN(b)
	}
	f := s.fact(i, n)
	s.listOK(i, n, f)
	b := math.NaN()
	for _, j := range f.fit {
		if e := &f.es[j]; e.mem > 0 && !(e.mem >= b) {
			b = e.mem
		}
	}
	s.least[key] = b
	return b, !math.IsNaN(b)
}

// exactShared reports whether sharedOver may sum the memory validate
// estimates for the modules already chosen (colocatedBytes) rather than
// their lower bounds: when the limit searched is validate's own, the
// spec's gpu_memory, and a candidate it drops would have no other effect
// than validate's refusal. Such a candidate is a miss of at least one
// blocking error and no memory excess, so it must be one miss drops
// (missDropped: something is kept, or the misses are full of ones as
// close); and so is every miss recorded below it in the descent (a
// module's memory, or colocated-pp-cp-unsupported: one block, no less
// excess). Left to validate, it would also teach nogoods from its other
// refusals, which only spare validate's time.
func (s *searcher) exactShared() bool {
	return !s.req.exhaustive && s.spec.GPUMemory > 0 && float64(s.spec.GPUMemory) == s.req.GPUMemory && s.missDropped(1, 0)
}

// sharedOverExact is sharedOver with the memory validate estimates for
// each module chosen up to position p (colocatedBytes), beside the least
// memory any factorization of each later one may have, summed in the
// modules' order as CheckMemory sums them: each term is at most
// validate's and floating-point addition in a fixed order is monotone, so
// a sum over gpu_memory is one validate's gpu-memory-short reports for
// every candidate with these choices (Invariant 2). A module that gets no
// estimate from validate has a model error, which refuses the candidate
// anyway.
func (s *searcher) sharedOverExact(p int) bool {
	each := s.shared[:0]
	chosen := s.order[:p+1]
	for i := range s.spec.Modules {
		if slices.Contains(chosen, i) {
			if b, ok := s.colocatedBytes(i); ok {
				each = append(each, b)
			}
			continue
		}
		if b, ok := s.leastBytes(i, s.cur[i].NumRanks); ok {
			each = append(each, b)
		}
	}
	s.shared = each
	return len(each) > 1 && validate.SharedBytes(each...) > float64(s.spec.GPUMemory)
}

// coloKey is a colocated module's sizes beside the language module's
// lanes (dp x gtp_remat), which its micro-batch reads.
type coloKey struct {
	module, n int
	z         Sizes
	lanes     int
}

// colocatedBytes is the memory validate estimates for module i as chosen
// now in the colocated placement (validate.Training with no MIMO
// communicators: every module shares every rank), memoized; false when it
// has no model.
func (s *searcher) colocatedBytes(i int) (float64, bool) {
	m := &s.spec.Modules[i]
	if m.Model == nil {
		return 0, false
	}
	c := &s.cur[i]
	lanes := 0
	if s.lang >= 0 {
		l := &s.cur[s.lang]
		lanes = l.DP * l.GTPRemat
	}
	k := coloKey{i, c.NumRanks, c.Sizes, lanes}
	if b, ok := s.coloBytes.get(k); ok {
		return b, true
	}
	e := model.Total(m.Model.Config, parallel(m, c), validate.Training(s.spec, i, c.DP, s.lang, lanes, 0))
	b := e.TotalBytes()
	s.coloBytes.put(k, b, 1)
	return b, true
}
