package validate

import (
	"fmt"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// The rules beyond the core ones, registered in the order they run:
// communicators, batch, target runtime, node locality. They are kept in
// one init so that the order never depends on file names.
func init() {
	topologyRules = append(topologyRules,
		(*checker).communicators,
		(*checker).batch,
		(*checker).target,
		(*checker).locality,
	)
}

// edge is one cross-module link: an encoder feeding the language model.
type edge struct {
	enc, lang int // indexes into Topology.Modules and Layout.Modules
}

// languageIndex returns the index of the language module, or -1.
func languageIndex(t *Topology) int {
	for i, m := range t.Modules {
		if m.Name == grid.LanguageModule {
			return i
		}
	}
	return -1
}

// edges lists every encoder -> language link, in layout order.
func edges(t *Topology) []edge {
	lang := languageIndex(t)
	if lang < 0 {
		return nil
	}
	var out []edge
	for i, m := range t.Modules {
		if m.Name != grid.LanguageModule {
			out = append(out, edge{enc: i, lang: lang})
		}
	}
	return out
}

// lanes is a module's number of data lanes: one per (dp, gtp_remat) pair.
func lanes(m *grid.Module) int { return m.DP * m.GTPRemat }

// lm returns the layout module that grid module i was built from; the two
// lists are in the same order.
func (c *checker) lm(i int) *layout.Module { return &c.l.Modules[i] }

// dpField names the field that sets a module's dp: dp when given, else
// num_ranks, from which dp is derived.
func dpField(m *layout.Module) string {
	if m.Given("dp") {
		return "dp"
	}
	return "num_ranks"
}

// reported says whether a diagnostic of rule was already added for module.
func (c *checker) reported(rule, module string) bool {
	for _, d := range c.d.Items {
		if d.Rule == rule && d.Module == module {
			return true
		}
	}
	return false
}

// divides reports whether one of a, b divides the other.
func dividesEither(a, b int) bool { return a%b == 0 || b%a == 0 }

// divisorsOf lists the divisors of n (n small enough to enumerate by
// trial up to its square root), for hints.
func divisorsOf(n int) []int {
	var lo, hi []int
	for d := 1; d*d <= n; d++ {
		if n%d == 0 {
			lo = append(lo, d)
			if d != n/d {
				hi = append([]int{n / d}, hi...)
			}
		}
	}
	return append(lo, hi...)
}

// compatibleDP suggests dp sizes compatible with other (divisors or small
// multiples), for hints.
func compatibleDP(other int) string {
	ds := divisorsOf(other)
	if len(ds) > 6 {
		ds = ds[len(ds)-6:]
	}
	s := ""
	for i, d := range ds {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(d)
	}
	return fmt.Sprintf("a divisor of %d (%s) or a multiple of it (%d, %d, ...)", other, s, 2*other, 3*other)
}
