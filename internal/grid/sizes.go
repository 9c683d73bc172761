package grid

// SizeField is one of a built module's placement and sizes: its key and
// how to read it.
type SizeField struct {
	Name string
	Of   func(*Module) int
}

// sizeFields are a module's placement and sizes, listed once: the
// layout's keys in its order (layout.SizeFields, a test keeps them in
// step), then expt_dp, the one size always derived.
var sizeFields = []SizeField{
	{"num_ranks", func(m *Module) int { return m.NumRanks }},
	{"rank_offset", func(m *Module) int { return m.RankOffset }},
	{"tp", func(m *Module) int { return m.TP }},
	{"gtp_remat", func(m *Module) int { return m.GTPRemat }},
	{"cp", func(m *Module) int { return m.CP }},
	{"pp", func(m *Module) int { return m.PP }},
	{"dp", func(m *Module) int { return m.DP }},
	{"ep", func(m *Module) int { return m.EP }},
	{"expt_tp", func(m *Module) int { return m.ExptTP }},
	{"expt_gtp_remat", func(m *Module) int { return m.ExptGTPRemat }},
	{"expt_dp", func(m *Module) int { return m.ExptDP }},
}

// SizeFields lists a module's placement and sizes: num_ranks,
// rank_offset, tp, gtp_remat, cp, pp, dp, ep, expt_tp, expt_gtp_remat and
// expt_dp. The slice is the caller's.
func SizeFields() []SizeField {
	return append([]SizeField(nil), sizeFields...)
}

// Size is the size or placement called name (a SizeFields name, or a
// dim of BaseDims and ExpertDims), and whether there is one.
func (m *Module) Size(name string) (int, bool) {
	for _, f := range sizeFields {
		if f.Name == name {
			return f.Of(m), true
		}
	}
	return 0, false
}
