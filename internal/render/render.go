// Package render prints a topology's process groups as tables, JSON, YAML,
// CSV or Markdown. Machine formats are streamed, so that a 131,072-rank
// world is printed without ever being held in memory as text.
package render

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/rankmap"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// Formats lists the output formats of render.
var Formats = []string{"text", "json", "yaml", "csv", "markdown", "svg", "html"}

// Options selects what to print and how.
type Options struct {
	Format  string
	Modules []string // only these modules; all when empty
	Groups  []string // only these group kinds; all when empty
	Rank    int      // with HasRank: only the groups this rank belongs to
	HasRank bool
	ByRank  bool // one row per rank instead of one per group
	Full    bool // do not fold long lists in tables
	// AllGroups keeps a table row for every group kind: no folding of
	// singleton kinds or of kinds with identical groups.
	AllGroups bool
	// Width is the widest a table line may be; 0 is DefaultWidth.
	Width int
	// Notes and Diags are what validate said, for the HTML page's side
	// panel (batch arithmetic, warnings pinned to their modules' ranks).
	Notes []string
	Diags []diag.Diagnostic
	// Limit and Offset page --by rank: ranks [Offset, Offset+Limit). A
	// Limit of 0 is every rank for the machine formats and a page of
	// DefaultPage ranks for a table, unless Full.
	Limit, Offset int
}

func (o Options) width() int {
	if o.Width <= 0 {
		return DefaultWidth
	}
	return o.Width
}

// UsageError is a request that does not fit the topology (an unknown
// module or group, a rank outside the world).
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usage(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

// Render writes the topology in the requested form.
func Render(w io.Writer, t *topo.Topology, o Options) error {
	if !slices.Contains(Formats, o.Format) {
		return usage("unknown format %q: want one of %s", o.Format, strings.Join(Formats, ", "))
	}
	sel, err := selectFrom(t, o)
	if err != nil {
		return err
	}
	if o.Format == "svg" || o.Format == "html" {
		return picture(w, t, o)
	}
	if o.HasRank && o.ByRank {
		return usage("--rank and --by rank cannot be combined")
	}
	if (o.Limit != 0 || o.Offset != 0) && !o.ByRank {
		return usage("--limit and --offset page --by rank")
	}
	if o.Limit < 0 || o.Offset < 0 {
		return usage("--limit and --offset cannot be negative")
	}
	if o.Full && o.Limit > 0 {
		return usage("--full prints every rank: it cannot be combined with --limit")
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	switch {
	case o.HasRank:
		err = renderRank(bw, t, sel, o)
	case o.ByRank:
		err = renderByRank(bw, t, sel, o)
	default:
		err = renderGroups(bw, t, sel, o)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// picture writes the rank map, --group naming the kind outlined.
func picture(w io.Writer, t *topo.Topology, o Options) error {
	switch {
	case o.HasRank || o.ByRank || len(o.Modules) > 0 || o.Full || o.AllGroups:
		return usage("--format %s draws every rank of every module: --rank, --by, --module, --full and --all-groups do not apply", o.Format)
	case len(o.Groups) > 1:
		return usage("--format %s outlines one group kind: give --group once", o.Format)
	}
	kind := ""
	if len(o.Groups) == 1 {
		kind = o.Groups[0]
	}
	m, err := rankmap.New(t, kind)
	if err != nil {
		return usage("%v", err)
	}
	if o.Format == "svg" {
		return m.SVG(w)
	}
	return m.HTML(w, rankmap.Page{Notes: o.Notes, Diags: o.Diags})
}

// JSON writes the plan JSON of the whole topology: the format that
// preflight and launch-plan hand to programs.
func JSON(w io.Writer, t *topo.Topology) error {
	return Render(w, t, Options{Format: "json"})
}

// selection is the modules and group kinds to print, in layout and
// catalogue order.
type selection struct {
	modules []*grid.Module
	kinds   map[string]bool // nil: every kind
}

func (s selection) groups(m *grid.Module) []grid.Group {
	if s.kinds == nil {
		return m.Groups
	}
	var out []grid.Group
	for _, g := range m.Groups {
		if s.kinds[g.Kind] {
			out = append(out, g)
		}
	}
	return out
}

func selectFrom(t *topo.Topology, o Options) (selection, error) {
	var s selection
	for _, name := range o.Modules {
		if t.Module(name) == nil {
			names := make([]string, len(t.Modules))
			for i, m := range t.Modules {
				names[i] = m.Name
			}
			return s, usage("no module named %q; the layout has %s", name, strings.Join(names, ", "))
		}
	}
	for _, m := range t.Modules {
		if len(o.Modules) == 0 || slices.Contains(o.Modules, m.Name) {
			s.modules = append(s.modules, m)
		}
	}
	if len(o.Groups) > 0 {
		s.kinds = map[string]bool{}
		for _, g := range o.Groups {
			if !slices.ContainsFunc(grid.GroupKinds, func(k grid.GroupKind) bool { return k.Name == g }) {
				names := make([]string, len(grid.GroupKinds))
				for i, k := range grid.GroupKinds {
					names[i] = k.Name
				}
				return s, usage("no group kind %q; kinds are %s", g, strings.Join(names, ", "))
			}
			s.kinds[g] = true
		}
	}
	if o.HasRank && (o.Rank < 0 || o.Rank >= t.WorldSize) {
		return s, usage("rank %d is outside the world [0, %d)", o.Rank, t.WorldSize)
	}
	return s, nil
}

// place returns a rank's node and local GPU, when the cluster is known.
func place(t *topo.Topology, rank int) (node, gpu int, ok bool) {
	if t.Cluster == nil || t.Cluster.GPUsPerNode == 0 {
		return 0, 0, false
	}
	return rank / t.Cluster.GPUsPerNode, rank % t.Cluster.GPUsPerNode, true
}

// coords is a rank's position in a module: base dims then expert dims.
type coords struct {
	names  []string
	values []int
	pp, ps int // pp coordinate and pp size
}

func coordsOf(m *grid.Module, rank int) coords {
	bn, bv, _ := m.Grid.Coords(rank, grid.BaseView)
	en, ev, _ := m.Grid.Coords(rank, grid.ExpertView)
	c := coords{ps: m.PP}
	c.names = append(bn, en[:len(en)-1]...) // pp is shared: keep it once
	c.values = append(bv, ev[:len(ev)-1]...)
	c.pp = bv[len(bv)-1]
	return c
}
