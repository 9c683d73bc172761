// Package validate checks a parsed layout against the rules of Megatron's
// MIMO runtime and builds its topology: every module's grid and groups.
package validate

import (
	"fmt"
	"io"
	"os"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// Result is the outcome of checking one layout.
type Result struct {
	Layout *layout.Layout
	Diags  *diag.List
	// Topology is set when every module's grid could be built, which is
	// the case whenever Diags holds no error from the core rules.
	Topology *topo.Topology
	// Estimates holds, in layout order, the memory and FLOPs of each
	// module with a model whose sizes and model rules are sound.
	Estimates []ModuleEstimate

	shortModules map[string]bool // modules already reported gpu-memory-short
}

// Valid reports whether the layout has no error (and, when strict, no
// warning).
func (r *Result) Valid(strict bool) bool { return r.Diags.Valid(strict) }

// Load reads, parses and checks a layout file ("-" is os.Stdin). The error
// is for a file that cannot be read.
func Load(path string) (*Result, error) { return LoadAt(path, nil) }

// LoadAt is Load with the layout's target_version replaced by v, when v
// is not nil (--target-version).
func LoadAt(path string, v *upstream.Version) (*Result, error) {
	return LoadFrom(path, os.Stdin, v)
}

// LoadFrom is LoadAt with standard input given (layout.LoadFrom).
func LoadFrom(path string, stdin io.Reader, v *upstream.Version) (*Result, error) {
	l, d, err := layout.LoadFrom(path, stdin)
	if err != nil {
		return nil, err
	}
	if v != nil {
		l.TargetVersion = *v
	}
	return Check(l, d), nil
}

// Check runs every rule over l, appending to d (the parser's diagnostics).
//
// Rules run in stages, so that one mistake does not hide the others: the
// core rules always; then every rule whose inputs are sound, in the order
// of stages() (register.go). A rule that reads only modules' sizes runs over the
// modules whose sizes are sound (read, and divisible, so that dp is
// known) even when another module or the placement is wrong; a rule that
// reads the placement or the grids (communicators, runtime placement,
// node locality) runs only once the whole topology is built.
func Check(l *layout.Layout, d *diag.List) *Result {
	return CheckWith(l, d, nil)
}

// Grids keeps the module grids built by earlier checks, for a caller that
// checks many layouts sharing modules (suggest checks every candidate); a
// grid depends only on its module's sizes and the world size, and rules
// only read it.
type Grids struct {
	m map[gridKey]*grid.Module
}

type gridKey struct {
	s     grid.Spec
	world int
}

// maxGrids bounds a Grids cache; a grid holds about 6 KB. suggest's
// candidates seldom share a grid (a module's offset is part of it): 4,096
// held 26 MB of the 118 MB suggest kept live on 16,384 GPUs
// (three-16384gpu-gbs4096), for no time saved over 1,024.
const maxGrids = 1 << 10

// NewGrids returns an empty grid cache.
func NewGrids() *Grids { return &Grids{m: map[gridKey]*grid.Module{}} }

func (g *Grids) build(s grid.Spec, world int) (*grid.Module, error) {
	if g == nil {
		return grid.NewModule(s, world)
	}
	k := gridKey{s, world}
	if m, ok := g.m[k]; ok {
		return m, nil
	}
	m, err := grid.NewModule(s, world)
	if err == nil {
		if len(g.m) >= maxGrids {
			clear(g.m) // bounded memory: start afresh
		}
		g.m[k] = m
	}
	return m, err
}

// CheckWith is Check reusing the grids of g (nil: none).
func CheckWith(l *layout.Layout, d *diag.List, g *Grids) *Result {
	c := &checker{l: l, d: d, r: &Result{Layout: l, Diags: d}, grids: g}
	c.core()
	if l.Version == 1 {
		for _, s := range stages() {
			if s.needsTopology && c.r.Topology == nil {
				continue
			}
			s.run(c)
		}
	}
	if c.r.Topology != nil {
		d.Summary = describe(c.r.Topology)
	}
	d.Sort()
	return c.r
}

// checker carries the state the rules share.
type checker struct {
	l *layout.Layout
	d *diag.List
	r *Result
	// sized holds, for each layout module in order, its sizes with dp
	// derived (the full grid once the topology is built), or nil when its
	// sizes are not sound.
	sized []*grid.Module
	grids *Grids
	// mode is set once the module spans are known to be sound.
	mode topo.Mode
}

// stage is one rule of the stages after the core rules.
type stage struct {
	// needsTopology: the rule reads placement or grids, and stays quiet
	// until every module's grid is built.
	needsTopology bool
	run           func(*checker)
}

func (c *checker) fact(format string, args ...any) {
	c.d.Notes = append(c.d.Notes, fmt.Sprintf(format, args...))
}

// sizedLanguage returns the index of the language module when its sizes
// are sound, or -1.
func (c *checker) sizedLanguage() int {
	for i, m := range c.sized {
		if m != nil && m.Name == grid.LanguageModule {
			return i
		}
	}
	return -1
}

// Unreadable is the result for a file that could not be read: one
// unreadable-file error without a position, so that the machine-read
// formats (json, sarif) have an entry for it.
func Unreadable(path string, err error) *Result {
	d := &diag.List{File: path}
	d.Add(diag.RuleUnreadableFile, diag.Pos{}, "", "check the path and its permissions; give a regular file, or '-' for standard input", "%v", err)
	return &Result{Diags: d}
}
