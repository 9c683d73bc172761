package plan

import (
	"fmt"
	"strings"

	"github.com/mimoplan/mimoplan/internal/layout"
)

// blocker is what stops every candidate of spec before any size matters,
// in words a user acts on; "" when the spec's placements are possible and
// the closest misses say what blocks them.
func blocker(spec *layout.Layout) string {
	k := len(spec.Modules)
	if k < 2 {
		return ""
	}
	coloc := spec.Colocated
	runtime := map[layout.Target]string{layout.TargetMegatronLM: "Megatron-LM's MIMO example", layout.TargetMegatronBridge: "Megatron-Bridge"}[spec.Target]
	if coloc != nil && *coloc && runtime != "" {
		return fmt.Sprintf("the spec wants the modules colocated (colocated: true), which %s cannot run (colocated-unsupported): set colocated: false, or target core",
			runtime)
	}
	if coloc != nil && *coloc {
		// Colocated modules are each their own single pipeline stage.
		var fixed []string
		for i := range spec.Modules {
			if m := &spec.Modules[i]; m.Given("pp") && m.PP > 1 {
				fixed = append(fixed, fmt.Sprintf("%s pp %d", m.Name, m.PP))
			}
		}
		if len(fixed) > 0 {
			return fmt.Sprintf("the spec wants the modules colocated (colocated: true), where every module needs pp 1 (colocated-pp-cp-unsupported), but it fixes %s: leave pp open, or set colocated: false",
				strings.Join(fixed, " and "))
		}
	}
	if coloc != nil && !*coloc || runtime != "" {
		// Disjoint spans: each module needs its fixed ranks, or at least
		// one (a node with align: node).
		need, fixed, open := 0, []string{}, []string{}
		for i := range spec.Modules {
			m := &spec.Modules[i]
			least := 1
			if m.AlignNode && spec.Cluster != nil && spec.Cluster.GPUsPerNode > 0 {
				least = spec.Cluster.GPUsPerNode
			}
			if m.NumRanks > 0 {
				least = m.NumRanks
				fixed = append(fixed, fmt.Sprintf("%s %d", m.Name, m.NumRanks))
			} else {
				open = append(open, m.Name)
			}
			need += least
		}
		if need > spec.WorldSize {
			why := "the modules need disjoint spans"
			if coloc == nil {
				why = fmt.Sprintf("%s cannot run colocated modules, so they need disjoint spans", runtime)
			}
			left := "no ranks are left"
			if len(open) > 0 {
				left = "no ranks are left for " + strings.Join(open, " and ")
			}
			return fmt.Sprintf("%s: %s of the %d (fixed num_ranks: %s; every module needs at least one rank, a node with align: node)",
				why, left, spec.WorldSize, strings.Join(fixed, ", "))
		}
	}
	return ""
}
