package validate

import (
	"fmt"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// stages are the rules after the core ones, in the order they run:
// communicators (first: the size rules leave out what they already
// reported), batch, the target runtime's size rules, the models, the
// target's placement rules, node locality. One list in one place, so that
// the order never depends on file names; nothing changes it.
func stages() []stage {
	return []stage{
		{needsTopology: true, run: (*checker).communicators},
		{run: (*checker).batch},
		{run: (*checker).targetSizes},
		{run: (*checker).models},
		{needsTopology: true, run: (*checker).targetPlacement},
		{needsTopology: true, run: (*checker).locality},
	}
}

// edge is one cross-module link: an encoder feeding the language model.
type edge struct {
	enc, lang int // indexes into Topology.Modules and Layout.Modules
}

// languageIndex returns the index of the language module, or -1.
func languageIndex(t *topo.Topology) int {
	for i, m := range t.Modules {
		if m.Name == grid.LanguageModule {
			return i
		}
	}
	return -1
}

// sizedEdges lists every encoder -> language link whose two ends have
// sound sizes, in layout order; indexes are into checker.sized.
func (c *checker) sizedEdges() []edge {
	lang := c.sizedLanguage()
	if lang < 0 {
		return nil
	}
	var out []edge
	for i, m := range c.sized {
		if m != nil && m.Name != grid.LanguageModule {
			out = append(out, edge{enc: i, lang: lang})
		}
	}
	return out
}

// edges lists every encoder -> language link, in layout order.
func edges(t *topo.Topology) []edge {
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

// seen indexes the diagnostics added so far, so that a rule can leave out
// a cause another rule already reported, in constant time per question.
type seen struct {
	byModule map[[2]string]bool // rule, module
	at       map[seenAt]bool
}

type seenAt struct {
	rule, module string
	pos          diag.Pos
}

func (c *checker) seen() seen {
	s := seen{byModule: map[[2]string]bool{}, at: map[seenAt]bool{}}
	for _, d := range c.d.Items {
		s.byModule[[2]string{d.Rule, d.Module}] = true
		s.at[seenAt{d.Rule, d.Module, diag.Pos{Line: d.Line, Column: d.Column}}] = true
	}
	return s
}

// has says whether rule was reported for module.
func (s seen) has(rule diag.RuleID, module string) bool {
	return s.byModule[[2]string{string(rule), module}]
}

// hasAt says whether one of rules was reported for module at pos.
func (s seen) hasAt(pos diag.Pos, module string, rules ...diag.RuleID) bool {
	for _, r := range rules {
		if s.at[seenAt{string(r), module, pos}] {
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

// dpHints suggests dp sizes compatible with another (its largest divisors,
// or multiples), for hints; each text is computed once per size.
type dpHints map[int]string

func (h dpHints) compatible(other int) string {
	if s, ok := h[other]; ok {
		return s
	}
	ds := divisorsOf(other)
	if len(ds) > 6 {
		ds = ds[len(ds)-6:]
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprint(d)
	}
	s := fmt.Sprintf("a divisor of %d (%s) or a multiple of it (%d, %d, ...)", other, strings.Join(parts, ", "), 2*other, 3*other)
	h[other] = s
	return s
}
