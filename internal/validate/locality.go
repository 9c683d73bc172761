package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mimoplan/mimoplan/internal/grid"
)

// localKinds are the groups that carry per-layer traffic and so belong
// inside one node's NVLink domain, with the field that sets each one's
// size.
var localKinds = []struct {
	kind   string
	fields []string
}{
	{"tp", []string{"tp"}},
	{"cp", []string{"cp"}},
	{"tp_cp", []string{"tp", "cp"}},
	{"expt_tp", []string{"expt_tp"}},
}

// maxShownRanks bounds the ranks a diagnostic lists.
const maxShownRanks = 16

// locality warns about tp, cp, tp_cp and expt_tp groups that span nodes,
// when the cluster shape is known. Rank r runs on node r / gpus_per_node.
func (c *checker) locality() {
	t := c.r.Topology
	if t.Cluster == nil || t.Cluster.GPUsPerNode <= 0 {
		return
	}
	gpn := t.Cluster.GPUsPerNode
	for i, m := range t.Modules {
		lm := c.lm(i)
		crossed := map[string]bool{}
		for _, k := range localKinds {
			e, ok := m.Group(k.kind)
			if !ok || e.GroupSize() < 2 {
				continue
			}
			// tp_cp is tp (or cp) itself when the other size is 1, and
			// crosses whenever either does: report it only on its own.
			if k.kind == "tp_cp" && (m.TP == 1 || m.CP == 1 || crossed["tp"] || crossed["cp"]) {
				continue
			}
			bad, first := crossing(e, gpn)
			if bad == 0 {
				continue
			}
			crossed[k.kind] = true
			ranks := e.AppendGroup(make([]int, 0, e.GroupSize()), first)
			c.d.Add("group-crosses-node", lm.Pos(firstGiven(lm, k.fields...)), m.Name,
				localityHint(k.kind, ranks, gpn, m),
				"%d of %d %s groups span nodes; first: %s on nodes %s (gpus_per_node %d)",
				bad, e.NumGroups(), k.kind, showRanks(ranks), showNodes(ranks, gpn), gpn)
		}
	}
}

// crossing counts the groups of e whose ranks sit on more than one node,
// and returns the index of the first, without allocating.
func crossing(e grid.Enum, gpn int) (bad, first int) {
	first = -1
	n := e.GroupSize()
	for i := range e.NumGroups() {
		node := e.Rank(i, 0) / gpn
		for k := 1; k < n; k++ {
			if e.Rank(i, k)/gpn != node {
				bad++
				if first < 0 {
					first = i
				}
				break
			}
		}
	}
	return bad, first
}

func localityHint(kind string, ranks []int, gpn int, m *grid.Module) string {
	lo, hi := ranks[0], ranks[0]
	for _, r := range ranks {
		lo, hi = min(lo, r), max(hi, r)
	}
	switch {
	case len(ranks) > gpn:
		return fmt.Sprintf("a %s group of %d ranks cannot fit the %d GPUs of one node: lower its size to at most %d", kind, len(ranks), gpn, gpn)
	case hi-lo+1 > gpn:
		return fmt.Sprintf("the group's ranks stretch over %d consecutive ranks, more than a node's %d GPUs: lower the sizes that come before %s in the grid order (tp, gtp_remat, cp)", hi-lo+1, gpn, kind)
	default:
		return fmt.Sprintf("the module starts at rank %d: align rank_offset (and the modules before it) to a multiple of gpus_per_node (%d) so that groups do not straddle a node boundary", m.RankOffset, gpn)
	}
}

// showRanks prints a group as [a b c], eliding the middle of a long one.
func showRanks(ranks []int) string {
	join := func(rs []int) string {
		parts := make([]string, len(rs))
		for i, r := range rs {
			parts[i] = fmt.Sprint(r)
		}
		return strings.Join(parts, " ")
	}
	if len(ranks) <= maxShownRanks {
		return "[" + join(ranks) + "]"
	}
	h := maxShownRanks / 2
	return fmt.Sprintf("[%s ... (%d more) ... %s]", join(ranks[:h]), len(ranks)-2*h, join(ranks[len(ranks)-h:]))
}

// showNodes lists the distinct nodes of ranks as ranges: "0-1", "0, 2".
func showNodes(ranks []int, gpn int) string {
	seen := map[int]bool{}
	var nodes []int
	for _, r := range ranks {
		if n := r / gpn; !seen[n] {
			seen[n] = true
			nodes = append(nodes, n)
		}
	}
	slices.Sort(nodes)
	var parts []string
	for i := 0; i < len(nodes); {
		j := i
		for j+1 < len(nodes) && nodes[j+1] == nodes[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(nodes[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", nodes[i], nodes[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
