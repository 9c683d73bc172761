package validate

import (
	"fmt"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/english"
	"github.com/mimoplan/mimoplan/internal/grid"
)

// localKind is a group kind that carries per-layer traffic and so belongs
// inside one node's NVLink domain.
type localKind struct {
	kind  string
	field string // the layout field that sets the group's size
	// stripe describes the kind's groups in module m.
	stripe func(m *grid.Module) stripe
	// before names the sizes whose product is the stride between members.
	before string
}

// localKinds are checked in this order. tp_cp is not among them: its
// groups are joined through tp and cp groups, so one of them spans nodes
// exactly when one of its tp or cp groups does (same-node is transitive),
// and the warning for tp or cp names it.
var localKinds = []localKind{
	{"tp", "tp", func(m *grid.Module) stripe {
		return stripe{m.RankOffset, 1, m.TP, m.NumRanks / m.TP}
	}, ""},
	{"cp", "cp", func(m *grid.Module) stripe {
		s := m.TP * m.GTPRemat
		return stripe{m.RankOffset, s, m.CP, m.NumRanks / (s * m.CP)}
	}, "tp*gtp_remat"},
	{"expt_tp", "expt_tp", func(m *grid.Module) stripe {
		return stripe{m.RankOffset, 1, m.ExptTP, m.NumRanks / m.ExptTP}
	}, ""},
}

// maxShownRanks bounds the ranks (and nodes) a diagnostic lists.
const maxShownRanks = 16

// locality warns about tp, cp, tp_cp and expt_tp groups that span nodes,
// when the cluster shape is known. Rank r runs on node r / gpus_per_node.
// Its cost depends on the modules' sizes, not on their numbers of ranks.
func (c *checker) locality() {
	t := c.r.Topology
	if t.Cluster == nil || t.Cluster.GPUsPerNode <= 0 {
		return
	}
	gpn := t.Cluster.GPUsPerNode
	type key struct {
		s   stripe
		gpn int
	}
	type found struct{ count, first int }
	memo := map[key]found{} // colocated modules often share their stripes
	for i, m := range t.Modules {
		lm := c.lm(i)
		for _, k := range localKinds {
			s := k.stripe(m)
			if s.size < 2 {
				continue
			}
			f, ok := memo[key{s, gpn}]
			if !ok {
				f.count, f.first = s.crossing(gpn)
				memo[key{s, gpn}] = f
			}
			if f.count == 0 {
				continue
			}
			msg := fmt.Sprintf("%d of %d %s groups span nodes; first: %s on %s (gpus_per_node %d)",
				f.count, s.groups(), k.kind, showRanks(s, f.first), showNodes(s, f.first, gpn), gpn)
			if k.kind != "expt_tp" && m.TP > 1 && m.CP > 1 {
				msg += "; so do the tp_cp groups that hold them"
			}
			c.d.Add(diag.RuleGroupCrossesNode, lm.Pos(firstGiven(lm, k.field)), m.Name,
				localityHint(k, s, m, gpn), "%s", msg)
		}
	}
}

// localityHint says what would keep the groups of s inside a node.
func localityHint(k localKind, s stripe, m *grid.Module, gpn int) string {
	switch block := s.block(); {
	case s.size > gpn:
		return fmt.Sprintf("%s group of %d ranks cannot fit the %s of one node: lower %s to at most %d", article(k.kind), s.size, english.Plural(gpn, "GPU"), k.field, gpn)
	case s.span() >= gpn:
		return fmt.Sprintf("%s group's ranks stretch over %d consecutive ranks (its members are %s = %d apart), more than a node's %s: lower %s or %s", article(k.kind), s.span()+1, k.before, s.stride, english.Plural(gpn, "GPU"), k.before, k.field)
	case m.RankOffset%gpn != 0:
		return fmt.Sprintf("the module starts at rank %d, inside node %d: make its rank_offset a multiple of gpus_per_node %d (resizing the modules before it if need be)", m.RankOffset, m.RankOffset/gpn, gpn)
	default:
		what := k.field
		if k.before != "" {
			what = k.before + "*" + k.field
		}
		return fmt.Sprintf("%s = %d does not divide gpus_per_node %d, so some groups straddle a node boundary: make %s a divisor of %d", what, block, gpn, what, gpn)
	}
}

// article puts "a" or "an" before a group kind.
func article(kind string) string {
	if strings.IndexByte("aeiou", kind[0]) >= 0 {
		return "an " + kind
	}
	return "a " + kind
}

// showRanks prints group i as [a b c], eliding the middle of a long one.
func showRanks(s stripe, i int) string {
	join := func(from, to int) string { // members [from, to)
		parts := make([]string, 0, to-from)
		for k := from; k < to; k++ {
			parts = append(parts, fmt.Sprint(s.rank(i, k)))
		}
		return strings.Join(parts, " ")
	}
	if s.size <= maxShownRanks {
		return "[" + join(0, s.size) + "]"
	}
	h := maxShownRanks / 2
	return fmt.Sprintf("[%s ... (%d more) ... %s]", join(0, h), s.size-2*h, join(s.size-h, s.size))
}

// showNodes names the nodes of group i: "nodes 3-4", or, when its members
// are more than a node apart, each member's node, as ranges ("nodes 0, 2,
// 4-5"), eliding the middle of a long list.
func showNodes(s stripe, i, gpn int) string {
	if s.stride <= gpn { // consecutive members are on the same or the next node
		return fmt.Sprintf("nodes %d-%d", s.rank(i, 0)/gpn, s.rank(i, s.size-1)/gpn)
	}
	// Members stride past whole nodes, so each is on a node of its own.
	ranges := func(from, to int) string { // the nodes of members [from, to)
		var parts []string
		for k := from; k < to; k++ {
			lo := s.rank(i, k) / gpn
			hi := lo
			for k+1 < to && s.rank(i, k+1)/gpn == hi+1 {
				k++
				hi++
			}
			if lo == hi {
				parts = append(parts, fmt.Sprint(lo))
			} else {
				parts = append(parts, fmt.Sprintf("%d-%d", lo, hi))
			}
		}
		return strings.Join(parts, ", ")
	}
	if s.size <= maxShownRanks {
		return "nodes " + ranges(0, s.size)
	}
	h := maxShownRanks / 2
	return fmt.Sprintf("nodes %s, ..., %s (%d in all)", ranges(0, h), ranges(s.size-h, s.size), s.size)
}
