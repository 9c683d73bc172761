// Package grid is a pure Go port of the rank enumeration of Megatron-LM's
// HyperCommGrid (megatron/core/hyper_comm_grid.py). It does no I/O.
//
// A grid has N named dimensions laid over the ranks [offset, offset+size);
// the first dimension varies fastest. A rank enumeration for a set of dims
// splits the grid into groups: the ranks of one group differ only in those
// dims. Group order and member order follow HyperCommGrid.get_rank_enum
// exactly: within a group the requested dims vary with the earliest (in
// dim_names order) fastest, and groups are ordered the same way over the
// remaining dims.
package grid

import (
	"errors"
	"fmt"
	"slices"
)

// BaseView is the name of the factorisation passed to New.
const BaseView = "base"

// Grid is a HyperCommGrid: a base factorisation of a rank span plus any
// number of registered views, other factorisations of the same span.
type Grid struct {
	offset int
	size   int
	views  map[string]*view
}

type view struct {
	name    string
	shape   []int
	names   []string
	shared  []string
	strides []int
}

func newView(name string, shape []int, names []string, shared []string) (*view, error) {
	if len(shape) != len(names) {
		return nil, fmt.Errorf("view %q: len(shape) %v != len(dim_names) %v", name, shape, names)
	}
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("view %q has duplicate dim_names: %v", name, names)
		}
		seen[n] = true
		if shape[i] <= 0 {
			return nil, fmt.Errorf("view %q shape must be positive ints, got %v", name, shape)
		}
	}
	v := &view{
		name:    name,
		shape:   slices.Clone(shape),
		names:   slices.Clone(names),
		shared:  slices.Clone(shared),
		strides: make([]int, len(shape)),
	}
	stride := 1
	for i, s := range shape {
		v.strides[i] = stride
		stride *= s
	}
	return v, nil
}

func (v *view) index(dim string) int { return slices.Index(v.names, dim) }

// product returns the product of the shape, or an error when it overflows or
// exceeds limit.
func product(shape []int, limit int) (int, error) {
	p := 1
	for _, s := range shape {
		if s <= 0 {
			return 0, fmt.Errorf("shape must be positive ints, got %v", shape)
		}
		if p > limit/s {
			return 0, fmt.Errorf("shape %v has more than %d ranks", shape, limit)
		}
		p *= s
	}
	return p, nil
}

// MaxRanks bounds every grid, so that sizes can never overflow an int.
const MaxRanks = 1 << 30

// New creates a grid of the given shape over [offset, offset+prod(shape)).
// worldSize bounds the span as HyperCommGrid's constructor does.
func New(shape []int, dimNames []string, offset, worldSize int) (*Grid, error) {
	base, err := newView(BaseView, shape, dimNames, nil)
	if err != nil {
		return nil, err
	}
	size, err := product(shape, MaxRanks)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, fmt.Errorf("rank_offset must be non-negative, got %d", offset)
	}
	if size > worldSize-offset {
		return nil, fmt.Errorf("grid shape %v is over sized with world size %d and rank offset %d", shape, worldSize, offset)
	}
	return &Grid{offset: offset, size: size, views: map[string]*view{BaseView: base}}, nil
}

// Offset is the first rank of the grid.
func (g *Grid) Offset() int { return g.offset }

// Size is the number of ranks in the grid.
func (g *Grid) Size() int { return g.size }

// Contains reports whether rank lies in the grid's span.
func (g *Grid) Contains(rank int) bool { return rank >= g.offset && rank < g.offset+g.size }

// RegisterView adds another factorisation of the grid's ranks, validated as
// HyperCommGrid.register_view does: shared dims must exist in both views
// and enumerate to the same groups in both.
func (g *Grid) RegisterView(name string, shape []int, dimNames []string, sharedDims []string) error {
	if _, ok := g.views[name]; ok {
		return fmt.Errorf("view %q is already registered", name)
	}
	v, err := newView(name, shape, dimNames, sharedDims)
	if err != nil {
		return err
	}
	size, err := product(shape, MaxRanks)
	if err != nil {
		return fmt.Errorf("view %q: %w", name, err)
	}
	if size != g.size {
		return fmt.Errorf("view %q shape %v has size %d, but the grid size is %d", name, shape, size, g.size)
	}
	base := g.views[BaseView]
	seen := map[string]bool{}
	for _, d := range sharedDims {
		if seen[d] {
			return fmt.Errorf("view %q has duplicate shared_dims: %v", name, sharedDims)
		}
		seen[d] = true
		if base.index(d) < 0 {
			return fmt.Errorf("shared dim %q of view %q is not in the base view %v", d, name, base.names)
		}
		if v.index(d) < 0 {
			return fmt.Errorf("shared dim %q of view %q is not in the view's dim_names %v", d, name, v.names)
		}
	}
	check := func(dims []string) error {
		be, err := g.enum(base, dims)
		if err != nil {
			return err
		}
		ve, err := g.enum(v, dims)
		if err != nil {
			return err
		}
		if !be.Equal(ve) {
			return fmt.Errorf("shared dims %v have different membership across views: base and view %q differ", dims, name)
		}
		return nil
	}
	for _, d := range sharedDims {
		if err := check([]string{d}); err != nil {
			return err
		}
	}
	if len(sharedDims) > 1 {
		if err := check(sharedDims); err != nil {
			return err
		}
	}
	g.views[name] = v
	return nil
}

// RankEnum returns the enumeration of the given dims in a view ("" or
// BaseView for the base factorisation), as get_rank_enum(dims, view=...).
func (g *Grid) RankEnum(dims []string, viewName string) (Enum, error) {
	if viewName == "" {
		viewName = BaseView
	}
	v, ok := g.views[viewName]
	if !ok {
		return Enum{}, fmt.Errorf("view %q is not registered", viewName)
	}
	return g.enum(v, dims)
}

func (g *Grid) enum(v *view, dims []string) (Enum, error) {
	if len(dims) == 0 {
		return Enum{}, errors.New("rank enumeration needs at least one dim")
	}
	in := make([]bool, len(v.names))
	for _, d := range dims {
		i := v.index(d)
		if i < 0 {
			return Enum{}, fmt.Errorf("%q is not in view %q with dim_names %v", d, v.name, v.names)
		}
		if in[i] {
			return Enum{}, fmt.Errorf("dim %q requested twice", d)
		}
		in[i] = true
	}
	var inner, outer []axis
	for i := range v.names {
		a := axis{size: v.shape[i], stride: v.strides[i]}
		if in[i] {
			inner = append(inner, a)
		} else {
			outer = append(outer, a)
		}
	}
	return newEnum(g.offset, outer, inner), nil
}

// Coords returns rank's coordinate along each dim of a view, in dim order.
func (g *Grid) Coords(rank int, viewName string) ([]string, []int, error) {
	if viewName == "" {
		viewName = BaseView
	}
	v, ok := g.views[viewName]
	if !ok {
		return nil, nil, fmt.Errorf("view %q is not registered", viewName)
	}
	if !g.Contains(rank) {
		return nil, nil, fmt.Errorf("rank %d is not in [%d, %d)", rank, g.offset, g.offset+g.size)
	}
	local := rank - g.offset
	c := make([]int, len(v.shape))
	for i := range v.shape {
		c[i] = local / v.strides[i] % v.shape[i]
	}
	return slices.Clone(v.names), c, nil
}
