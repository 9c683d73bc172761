package layout

import (
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/diag"
)

// The keys a suggest spec adds to a layout (docs/suggest.md).
var (
	specTopFields    = []string{"colocated"}
	specModuleFields = []string{"max_tp", "align"}
)

// ParseSpec parses a suggest spec: a layout whose modules may leave
// num_ranks, rank_offset and every parallel size open, with the constraint
// keys colocated (top level), max_tp and align (per module). A module's
// open fields are those not Given; NumRanks is 0 when num_ranks is open.
func ParseSpec(file string, data []byte) (*Layout, *diag.List) {
	return parse(&parser{spec: true}, file, data)
}

// known is the key list of a mapping: base, plus extra in a spec.
func (p *parser) known(base, extra []string) []string {
	if !p.spec {
		return base
	}
	return append(slices.Clone(base), extra...)
}

func (p *parser) specTop(fs map[string]field) {
	if f, ok := fs["colocated"]; ok {
		if b, ok := p.boolean(f, "colocated", ""); ok {
			p.l.Colocated = &b
		}
	}
}

func (p *parser) specModule(m *Module, fs map[string]field) {
	if f, ok := fs["max_tp"]; ok {
		v, ok := p.integer(f, "max_tp", m.Name, 1, MaxWorldSize, "the largest tp the planner may choose for this module")
		if ok {
			m.MaxTP = v
		} else {
			m.Broken = true
		}
	}
	if f, ok := fs["align"]; ok {
		v := resolve(f.value)
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Value != "node" {
			p.d.Add(diag.RuleInvalidValue, nodePos(v), m.Name, "align: node keeps the module on whole nodes; leave it out otherwise",
				"align must be node, got %s", describe(v))
			m.Broken = true
		} else {
			m.AlignNode = true
		}
	}
}

// boolean reads true or false.
func (p *parser) boolean(f field, name, module string) (bool, bool) {
	v := resolve(f.value)
	if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || quotedStyle(v) || (v.Value != "true" && v.Value != "false") {
		p.d.Add(diag.RuleInvalidValue, nodePos(v), module, "write true or false", "%s must be true or false, got %s", name, describe(v))
		return false, false
	}
	return v.Value == "true", true
}
