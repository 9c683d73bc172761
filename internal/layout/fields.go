package layout

import "fmt"

// fieldKind says how a module field is read.
type fieldKind int

const (
	kindName    fieldKind = iota // the module's name
	kindSize                     // a parallel size: positive, default 1, at most world_size
	kindCount                    // num_ranks and dp: positive, at most world_size
	kindOffset                   // rank_offset: the first global rank
	kindExperts                  // num_experts
	kindModel                    // read with the model (model.go)
)

// moduleField is one key of a module mapping.
type moduleField struct {
	name string
	kind fieldKind
	// int is the Module field an integer key sets.
	int func(*Module) *int
}

// moduleFieldTable lists a module's keys once: the parser, the key list the
// unknown-field suggestion picks from and the size defaults all read it.
var moduleFieldTable = []moduleField{
	{"name", kindName, nil},
	{"num_ranks", kindCount, func(m *Module) *int { return &m.NumRanks }},
	{"rank_offset", kindOffset, func(m *Module) *int { return &m.RankOffset }},
	{"tp", kindSize, func(m *Module) *int { return &m.TP }},
	{"gtp_remat", kindSize, func(m *Module) *int { return &m.GTPRemat }},
	{"cp", kindSize, func(m *Module) *int { return &m.CP }},
	{"pp", kindSize, func(m *Module) *int { return &m.PP }},
	{"dp", kindCount, func(m *Module) *int { return &m.DP }},
	{"ep", kindSize, func(m *Module) *int { return &m.EP }},
	{"expt_tp", kindSize, func(m *Module) *int { return &m.ExptTP }},
	{"expt_gtp_remat", kindSize, func(m *Module) *int { return &m.ExptGTPRemat }},
	{"num_experts", kindExperts, func(m *Module) *int { return &m.NumExperts }},
	{"vpp", kindModel, nil},
	{"decoder_first_pipeline_num_layers", kindModel, nil},
	{"decoder_last_pipeline_num_layers", kindModel, nil},
	{"account_for_embedding_in_pipeline_split", kindModel, nil},
	{"account_for_loss_in_pipeline_split", kindModel, nil},
	{"pipeline_model_parallel_layout", kindModel, nil},
	{"freeze", kindModel, nil},
	{"model", kindModel, nil},
}

// moduleFields are the names of moduleFieldTable, in its order.
var moduleFields = func() []string {
	names := make([]string, len(moduleFieldTable))
	for i, f := range moduleFieldTable {
		names[i] = f.name
	}
	return names
}()

// bounds are the least and greatest values of an integer field, and the
// hint given with a value outside them.
func (f moduleField) bounds(limit int) (lo, hi int, hint string) {
	switch f.kind {
	case kindOffset:
		return 0, MaxWorldSize, "the first global rank of the module"
	case kindExperts:
		return 1, MaxWorldSize, "the number of MoE experts; leave it out for a dense module"
	}
	switch f.name {
	case "num_ranks":
		return 1, limit, fmt.Sprintf("num_ranks is the number of GPUs of the module, at most world_size (%d)", limit)
	case "dp":
		return 1, limit, "dp is the data-parallel size; give num_ranks instead to have dp derived"
	}
	return 1, limit, fmt.Sprintf("%s is a parallel size: 1 means none, at most world_size (%d)", f.name, limit)
}

// newModule is a module with every parallel size at its default, 1.
func newModule() Module {
	var m Module
	for _, f := range moduleFieldTable {
		if f.kind == kindSize {
			*f.int(&m) = 1
		}
	}
	return m
}

// SizeField is a module key that holds a placement or a size, and how to
// read it from a Module.
type SizeField struct {
	Name string
	// Parallel is set for the parallel sizes (1 means none, the default),
	// not for num_ranks, rank_offset and dp.
	Parallel bool
	Of       func(*Module) int
}

// SizeFields lists a module's placement and size keys in the layout's
// order, read from moduleFieldTable: num_ranks, rank_offset, tp,
// gtp_remat, cp, pp, dp, ep, expt_tp, expt_gtp_remat (grid.SizeFields
// reads a built module's, with expt_dp).
func SizeFields() []SizeField {
	var out []SizeField
	for _, f := range moduleFieldTable {
		switch f.kind {
		case kindSize, kindCount, kindOffset:
			field := f.int
			out = append(out, SizeField{f.name, f.kind == kindSize, func(m *Module) int { return *field(m) }})
		}
	}
	return out
}
