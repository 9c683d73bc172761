// Package rankmap draws a topology as a rank map: a node x GPU grid with a
// cell per rank, coloured by module, the pipeline stage shaded, the groups
// of one kind outlined, bridge leaders and embedding ranks marked. SVG is
// the static picture; HTML the page to explore it (hover and click a rank,
// pick a group kind, read the module table, the batch arithmetic and the
// warnings). Worlds above AggregateAbove ranks are drawn a cell per node.
package rankmap

import (
	"fmt"
	"slices"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// AggregateAbove is the largest world drawn a cell per rank; a larger one
// gets a cell per node (or row), which drills down to its ranks.
const AggregateAbove = 4096

// defaultRow is the row width without a cluster: ranks are drawn in rows
// of this many, called rows rather than nodes.
const defaultRow = 8

// Palette colours the modules, in layout order (Tableau 10).
var Palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// Page is what the HTML page shows besides the topology.
type Page struct {
	// Notes are validate's derived figures (batch arithmetic).
	Notes []string
	// Diags are validate's warnings and errors, pinned to their modules'
	// ranks.
	Diags []diag.Diagnostic
}

// Map is what both pictures draw.
type Map struct {
	t       *topo.Topology
	Name    string
	World   int
	Row     int    // GPUs per node, or defaultRow
	RowName string // "node" or "row"
	Rows    int
	// Aggregated pictures draw a cell per row.
	Aggregated bool
	Modules    []Module
	Kind       string
}

// Module is one module as the pictures show it.
type Module struct {
	*grid.Module
	Color string
	// Role is "src" for an encoder and "dest" for the language module
	// when a BridgeCommunicator joins non-colocated modules; "" otherwise.
	Role string
	// lanes is the enumeration BridgeCommunicator elects leaders from.
	lanes grid.Enum
}

// New builds the map of a topology. kind must be a group kind or "".
func New(t *topo.Topology, kind string) (*Map, error) {
	if kind == "" {
		kind = "tp"
	}
	if !slices.ContainsFunc(grid.GroupKinds, func(k grid.GroupKind) bool { return k.Name == kind }) {
		return nil, fmt.Errorf("no group kind %q", kind)
	}
	m := &Map{t: t, Name: t.Name, World: t.WorldSize, Row: defaultRow, RowName: "row", Kind: kind}
	if t.Cluster != nil && t.Cluster.GPUsPerNode > 0 {
		m.Row, m.RowName = t.Cluster.GPUsPerNode, "node"
	}
	m.Rows = (t.WorldSize + m.Row - 1) / m.Row
	m.Aggregated = t.WorldSize > AggregateAbove
	bridge := t.Mode == topo.NonColocated && t.Module(grid.LanguageModule) != nil
	for i, gm := range t.Modules {
		mod := Module{Module: gm, Color: Palette[i%len(Palette)]}
		if bridge {
			mod.Role = "src"
			if gm.Name == grid.LanguageModule {
				mod.Role = "dest"
			}
			e, err := gm.Grid.RankEnum([]string{"tp", "cp", "pp"}, grid.BaseView)
			if err != nil {
				return nil, fmt.Errorf("module %q: %w", gm.Name, err)
			}
			mod.lanes = e
		}
		m.Modules = append(m.Modules, mod)
	}
	return m, nil
}

// Slot is one module on one rank.
type Slot struct {
	Mod    int // index into Modules
	Stage  int // pp coordinate
	Group  int // index of the rank's group of the outlined kind; -1 none
	Leader bool
	Embd   bool
}

// Slots returns the modules rank r serves, in layout order.
func (m *Map) Slots(r int) []Slot {
	var out []Slot
	for i, mod := range m.Modules {
		if !mod.Grid.Contains(r) {
			continue
		}
		s := Slot{Mod: i, Group: -1}
		_, v, _ := mod.Grid.Coords(r, grid.BaseView)
		s.Stage = v[len(v)-1]
		if e, ok := mod.Group(m.Kind); ok {
			s.Group = e.GroupOf(r)
		}
		if e, ok := mod.Group("embd"); ok {
			s.Embd = e.GroupOf(r) >= 0
		}
		s.Leader = m.leader(mod, r)
		out = append(out, s)
	}
	return out
}

// leader tells whether rank r is one of the module's bridge leaders.
// BridgeCommunicator.get_leader_rank enumerates the grid over every dim
// but dp and gtp_remat (one group per data lane) and elects the last
// member of each group on the source side and the first on the
// destination side.
func (m *Map) leader(mod Module, r int) bool {
	if mod.Role == "" {
		return false
	}
	e := mod.lanes
	g, member := e.Locate(r)
	if g < 0 {
		return false
	}
	if mod.Role == "src" {
		return member == e.GroupSize()-1
	}
	return member == 0
}

// place is a rank's row and column.
func (m *Map) place(r int) (row, col int) { return r / m.Row, r % m.Row }

// RowSummary is what an aggregated cell shows of one row: the modules on
// it and its marks.
type RowSummary struct {
	Mods            []int
	Stages          []int // of each module's first rank on the row
	Leaders, Embeds int
}

// Summary summarises row n.
func (m *Map) Summary(n int) RowSummary {
	var s RowSummary
	for r := n * m.Row; r < min((n+1)*m.Row, m.World); r++ {
		for _, sl := range m.Slots(r) {
			if !slices.Contains(s.Mods, sl.Mod) {
				s.Mods = append(s.Mods, sl.Mod)
				s.Stages = append(s.Stages, sl.Stage)
			}
			if sl.Leader {
				s.Leaders++
			}
			if sl.Embd {
				s.Embeds++
			}
		}
	}
	return s
}
