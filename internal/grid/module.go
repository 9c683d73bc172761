package grid

import "fmt"

// ExpertView is the name of the expert factorisation of a module's grid.
const ExpertView = "expert"

// Base and expert dim names, in HyperCommGrid order (first varies fastest).
var (
	BaseDims   = []string{"tp", "gtp_remat", "cp", "dp", "pp"}
	ExpertDims = []string{"expt_tp", "ep", "expt_gtp_remat", "expt_dp", "pp"}
)

// GroupKind is one ProcessGroupCollection field and the grid dims that
// build it.
type GroupKind struct {
	Name string
	Dims []string
	View string
	// LanguageOnly kinds exist only for the module named language; they are
	// derived from the pp groups rather than enumerated directly.
	LanguageOnly bool
}

// GroupKinds lists every group a module gets, in the order mimoplan prints
// them (the order of Megatron's pg_collection_from_grid).
var GroupKinds = []GroupKind{
	{Name: "tp", Dims: []string{"tp"}},
	{Name: "cp", Dims: []string{"cp"}},
	{Name: "pp", Dims: []string{"pp"}},
	{Name: "dp", Dims: []string{"dp"}},
	{Name: "dp_cp", Dims: []string{"dp", "cp"}},
	{Name: "dp_cp_gtp_remat", Dims: []string{"gtp_remat", "dp", "cp"}},
	{Name: "gtp_remat", Dims: []string{"gtp_remat"}},
	{Name: "tp_cp", Dims: []string{"tp", "cp"}},
	{Name: "tp_dp", Dims: []string{"tp", "gtp_remat", "dp"}},
	{Name: "tp_dp_cp", Dims: []string{"tp", "gtp_remat", "dp", "cp"}},
	{Name: "mp", Dims: []string{"tp", "gtp_remat", "pp"}},
	{Name: "intra_dist_opt", Dims: []string{"tp", "gtp_remat", "cp", "dp", "pp"}},
	{Name: "ep", Dims: []string{"ep"}, View: ExpertView},
	{Name: "expt_tp", Dims: []string{"expt_tp"}, View: ExpertView},
	{Name: "expt_gtp_remat", Dims: []string{"expt_gtp_remat"}, View: ExpertView},
	{Name: "expt_dp", Dims: []string{"expt_dp"}, View: ExpertView},
	{Name: "expt_dp_gtp_remat", Dims: []string{"expt_gtp_remat", "expt_dp"}, View: ExpertView},
	{Name: "tp_ep", Dims: []string{"expt_tp", "ep"}, View: ExpertView},
	{Name: "tp_ep_pp", Dims: []string{"expt_tp", "ep", "pp"}, View: ExpertView},
	{Name: "tp_ep_pp_with_egtp_remat", Dims: []string{"expt_tp", "ep", "expt_gtp_remat", "pp"}, View: ExpertView},
	{Name: "embd", Dims: []string{"pp"}, LanguageOnly: true},
	{Name: "pos_embd", Dims: []string{"pp"}, LanguageOnly: true},
}

// LanguageModule is the name Megatron reserves for the language model
// (MIMO_LANGUAGE_MODULE_KEY).
const LanguageModule = "language"

// Spec is one module's parallel sizes and placement, as ModuleGridSpec.
type Spec struct {
	Name         string
	RankOffset   int
	NumRanks     int
	TP           int
	GTPRemat     int
	CP           int
	PP           int
	EP           int
	ExptTP       int
	ExptGTPRemat int
}

// Module is a module's built grid: derived sizes and every group.
type Module struct {
	Spec
	DP     int
	ExptDP int
	Grid   *Grid
	Groups []Group
}

// Group is one kind of process group and its enumeration.
type Group struct {
	Kind string
	Enum Enum
}

// NewModule builds the base grid [tp, gtp_remat, cp, dp, pp] and the expert
// view [expt_tp, ep, expt_gtp_remat, expt_dp, pp] sharing pp, and
// enumerates every group. The spec must already satisfy ModuleGridSpec's
// divisibility rules; an error here means it does not.
func NewModule(s Spec, worldSize int) (*Module, error) {
	dense := s.TP * s.GTPRemat * s.CP * s.PP
	expert := s.ExptTP * s.EP * s.ExptGTPRemat * s.PP
	if dense <= 0 || expert <= 0 || s.NumRanks <= 0 {
		return nil, fmt.Errorf("module %q: sizes must be positive", s.Name)
	}
	if s.NumRanks%dense != 0 {
		return nil, fmt.Errorf("module %q: num_ranks (%d) must be divisible by tp*gtp_remat*cp*pp (%d)", s.Name, s.NumRanks, dense)
	}
	if s.NumRanks%expert != 0 {
		return nil, fmt.Errorf("module %q: num_ranks (%d) must be divisible by expt_tp*ep*expt_gtp_remat*pp (%d)", s.Name, s.NumRanks, expert)
	}
	m := &Module{Spec: s, DP: s.NumRanks / dense, ExptDP: s.NumRanks / expert}
	g, err := New([]int{s.TP, s.GTPRemat, s.CP, m.DP, s.PP}, BaseDims, s.RankOffset, worldSize)
	if err != nil {
		return nil, fmt.Errorf("module %q: %w", s.Name, err)
	}
	if err := g.RegisterView(ExpertView, []int{s.ExptTP, s.EP, s.ExptGTPRemat, m.ExptDP, s.PP}, ExpertDims, []string{"pp"}); err != nil {
		return nil, fmt.Errorf("module %q: %w", s.Name, err)
	}
	m.Grid = g
	language := s.Name == LanguageModule
	for _, k := range GroupKinds {
		if k.LanguageOnly && !language {
			continue
		}
		e, err := g.RankEnum(k.Dims, k.View)
		if err != nil {
			return nil, fmt.Errorf("module %q group %s: %w", s.Name, k.Name, err)
		}
		switch k.Name {
		case "embd":
			e = e.Ends(true)
		case "pos_embd":
			e = e.Ends(false)
		}
		m.Groups = append(m.Groups, Group{Kind: k.Name, Enum: e})
	}
	return m, nil
}

// Group returns the enumeration of one kind, if the module has it.
func (m *Module) Group(kind string) (Enum, bool) {
	for _, g := range m.Groups {
		if g.Kind == kind {
			return g.Enum, true
		}
	}
	return Enum{}, false
}
