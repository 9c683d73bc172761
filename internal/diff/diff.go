// Package diff compares two layouts by what they build: per module the
// sizes, the process groups of every kind and the ranks that move between
// them, where each rank lands (module, node, pipeline stage), and the batch
// arithmetic. It answers whether a checkpoint can be reused as it is or
// must be resharded.
package diff

import (
	"slices"
	"strconv"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// Pair is one value in the first layout and in the second.
type Pair[T comparable] struct {
	A T `json:"a"`
	B T `json:"b"`
}

// Changed tells whether the two values differ.
func (p Pair[T]) Changed() bool { return p.A != p.B }

// Report is every difference between two layouts.
type Report struct {
	A         string       `json:"a"`
	B         string       `json:"b"`
	Identical bool         `json:"identical_groups"`
	WorldSize Pair[int]    `json:"world_size"`
	Mode      Pair[string] `json:"mode"`
	GPUs      Pair[int]    `json:"gpus_per_node"` // 0: no cluster
	Modules   []Module     `json:"modules"`
	Ranks     Ranks        `json:"ranks"`
	Batch     Batch        `json:"batch"`
	Target    Pair[string] `json:"target"`
}

// Module is one module's differences. Status is same, changed, added (only
// in B) or removed (only in A).
type Module struct {
	Name   string        `json:"name"`
	Status string        `json:"status"`
	Span   Pair[string]  `json:"span"` // [offset, end), "" when absent
	Sizes  []Size        `json:"sizes,omitempty"`
	Groups []GroupChange `json:"groups,omitempty"`
	// Same lists the kinds whose groups did not change.
	Same []string `json:"same_groups,omitempty"`
}

// Size is one parallel size that differs.
type Size struct {
	Name string `json:"name"`
	Pair[int]
}

// GroupChange is a group kind whose groups differ: their number and size
// on each side and how many ranks end up with other group mates (a rank
// that joins or leaves the module counts).
type GroupChange struct {
	Kind string `json:"kind"`
	// SameAs names an earlier kind of the list with the same groups as
	// this one on both sides (dp_cp is dp when cp is 1 on both).
	SameAs     string    `json:"same_as,omitempty"`
	Groups     Pair[int] `json:"groups"`
	Size       Pair[int] `json:"size"`
	RanksMoved int       `json:"ranks_moved"`
}

// Ranks counts the ranks whose module, node or pipeline stage changes,
// with the first few as examples.
type Ranks struct {
	ModuleChanged int          `json:"module_changed"`
	NodeChanged   int          `json:"node_changed"`
	StageChanged  int          `json:"stage_changed"`
	Examples      []RankChange `json:"examples,omitempty"`
}

// RankChange is one rank's place on each side. Modules lists the modules
// it serves (several when colocated); Stages the pp position in each
// ("1/4"), Node is -1 without a cluster.
type RankChange struct {
	Rank    int                     `json:"rank"`
	Modules Pair[string]            `json:"modules"`
	Node    Pair[int]               `json:"node"`
	Stages  map[string]Pair[string] `json:"stages,omitempty"`
}

// Batch is the batch settings and the arithmetic validate derives from
// them (micro-batches, fan-out), as notes only in A and only in B.
type Batch struct {
	MicroBatchSize  Pair[int] `json:"micro_batch_size"`
	GlobalBatchSize Pair[int] `json:"global_batch_size"`
	Removed         []string  `json:"notes_removed,omitempty"`
	Added           []string  `json:"notes_added,omitempty"`
}

// Changed tells whether anything about the batch differs.
func (b Batch) Changed() bool {
	return b.MicroBatchSize.Changed() || b.GlobalBatchSize.Changed() || len(b.Removed)+len(b.Added) > 0
}

// maxExamples is how many ranks a report shows as examples.
const maxExamples = 8

// Compare compares two checked layouts; both must have a topology.
func Compare(nameA string, a *validate.Result, nameB string, b *validate.Result) *Report {
	ta, tb := a.Topology, b.Topology
	r := &Report{
		A: nameA, B: nameB,
		WorldSize: Pair[int]{ta.WorldSize, tb.WorldSize},
		Mode:      Pair[string]{string(ta.Mode), string(tb.Mode)},
		GPUs:      Pair[int]{gpn(ta), gpn(tb)},
		Target:    Pair[string]{string(ta.Target), string(tb.Target)},
	}
	for _, ma := range ta.Modules {
		mb := tb.Module(ma.Name)
		if mb == nil {
			r.Modules = append(r.Modules, Module{Name: ma.Name, Status: "removed", Span: Pair[string]{span(ma), ""}})
			continue
		}
		r.Modules = append(r.Modules, compareModule(ma, mb))
	}
	for _, mb := range tb.Modules {
		if ta.Module(mb.Name) == nil {
			r.Modules = append(r.Modules, Module{Name: mb.Name, Status: "added", Span: Pair[string]{"", span(mb)}})
		}
	}
	r.Identical = true
	for _, m := range r.Modules {
		if m.Status == "added" || m.Status == "removed" || len(m.Groups) > 0 {
			r.Identical = false
		}
	}
	r.Ranks = compareRanks(ta, tb)
	r.Batch = compareBatch(a, b)
	return r
}

func gpn(t *topo.Topology) int {
	if t.Cluster == nil {
		return 0
	}
	return t.Cluster.GPUsPerNode
}

func span(m *grid.Module) string {
	return "[" + itoa(m.RankOffset) + ", " + itoa(m.RankOffset+m.NumRanks) + ")"
}

func compareModule(ma, mb *grid.Module) Module {
	out := Module{Name: ma.Name, Status: "same", Span: Pair[string]{span(ma), span(mb)}}
	for _, f := range grid.SizeFields() {
		if a, b := f.Of(ma), f.Of(mb); a != b {
			out.Sizes = append(out.Sizes, Size{f.Name, Pair[int]{a, b}})
		}
	}
	for _, k := range grid.GroupKinds {
		ea, okA := ma.Group(k.Name)
		eb, okB := mb.Group(k.Name)
		if !okA && !okB {
			continue
		}
		moved := ranksMoved(ea, okA, eb, okB, ma, mb)
		if moved == 0 {
			out.Same = append(out.Same, k.Name)
			continue
		}
		gc := GroupChange{Kind: k.Name, RanksMoved: moved}
		for _, prev := range out.Groups {
			if prev.SameAs != "" {
				continue
			}
			pa, _ := ma.Group(prev.Kind)
			pb, _ := mb.Group(prev.Kind)
			if okA && okB && pa.Equal(ea) && pb.Equal(eb) {
				gc.SameAs = prev.Kind
				break
			}
		}
		if okA {
			gc.Groups.A, gc.Size.A = ea.NumGroups(), ea.GroupSize()
		}
		if okB {
			gc.Groups.B, gc.Size.B = eb.NumGroups(), eb.GroupSize()
		}
		out.Groups = append(out.Groups, gc)
	}
	if len(out.Sizes) > 0 || len(out.Groups) > 0 {
		out.Status = "changed"
	}
	return out
}

// ranksMoved counts the ranks of either module whose group of this kind
// is not the same set of ranks on both sides (or that is in a group on
// one side only). A rank's verdict is its A group's: that group is the
// same set as a B group exactly when all its members share their first
// member's B group and the sizes agree, and then none of its members
// moved, else all of them did. So one pass over each side's members, and
// no memory per group (hashes of every group took 86 MB at 4,194,304
// ranks, 221 MB at 16,777,216).
func ranksMoved(ea grid.Enum, okA bool, eb grid.Enum, okB bool, ma, mb *grid.Module) int {
	if okA && okB && ea.Equal(eb) {
		return 0
	}
	moved := 0
	if okA {
		for i := range ea.NumGroups() {
			first, gb, same := true, -1, okB && ea.GroupSize() == eb.GroupSize()
			ea.Runs(i, func(start, stride, n int) {
				for k := range n {
					if !same {
						return
					}
					g := eb.GroupOf(start + k*stride)
					if first {
						gb, first = g, false
					}
					same = g >= 0 && g == gb
				}
			})
			if !same {
				moved += ea.GroupSize()
			}
		}
	}
	if okB {
		// The ranks in a B group and in no A group.
		for i := range eb.NumGroups() {
			eb.Runs(i, func(start, stride, n int) {
				for k := range n {
					if !okA || ea.GroupOf(start+k*stride) < 0 {
						moved++
					}
				}
			})
		}
	}
	return moved
}

func itoa(v int) string { return strconv.Itoa(v) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
