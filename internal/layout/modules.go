package layout

// The modules list and each module's fields.

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/diag"
)

func (p *parser) modules(fs map[string]field) {
	f, ok := fs["modules"]
	if !ok {
		p.d.Add(diag.RuleInvalidValue, diag.Pos{Line: 1, Column: 1}, "", "add a 'modules:' list with at least the module named language", "modules is required")
		return
	}
	seq := resolve(f.value)
	if seq.Kind != yaml.SequenceNode || len(seq.Content) == 0 {
		p.d.Add(diag.RuleInvalidValue, nodePos(seq), "", "list modules as '- name: language' items", "modules must be a non-empty list, got %s", describe(seq))
		return
	}
	limit := p.l.WorldSize
	if limit == 0 {
		limit = MaxWorldSize
	}
	names := map[string]int{}
	for i, n := range seq.Content {
		m := p.module(n, i, limit)
		if m.Name != "" {
			if line, dup := names[m.Name]; dup {
				p.d.Add(diag.RuleDuplicateModule, m.Pos("name"), m.Name, "give each module its own name", "module name %q is already used at line %d", m.Name, line)
				m.Broken = true
			} else {
				names[m.Name] = m.Pos("name").Line
			}
		}
		if !m.Given("rank_offset") && !p.spec { // a spec's offsets are the planner's to choose
			if i > 0 {
				prev := p.l.Modules[i-1]
				m.RankOffset = prev.End()
				if prev.Broken || prev.Unplaced || prev.NumRanks == 0 {
					m.Unplaced = true
				}
			}
		}
		p.l.Modules = append(p.l.Modules, m)
	}
}

func (p *parser) module(n *yaml.Node, index, limit int) Module {
	n = resolve(n)
	m := newModule()
	m.pos = map[string]diag.Pos{"": nodePos(n)}
	what, module := fmt.Sprintf("modules[%d]", index), peekName(n)
	if module != "" {
		what = fmt.Sprintf("module %q", module)
	}
	fs, ok := p.fields(n, what, module, p.known(moduleFields, specModuleFields))
	if !ok {
		m.Broken = true
		return m
	}
	suggested := p.suggested
	for k, f := range fs {
		m.pos[k] = nodePos(resolve(f.value))
	}
	if f, ok := fs["name"]; ok {
		v := resolve(f.value)
		switch {
		case v.Kind != yaml.ScalarNode || v.Tag != "!!str":
			p.d.Add(diag.RuleInvalidValue, nodePos(v), "", "a module name is lower-case letters, digits and _", "%s.name must be text, got %s", what, describe(v))
			m.Broken = true
		case len(v.Value) > 64 || !moduleName.MatchString(v.Value):
			p.d.Add(diag.RuleInvalidValue, nodePos(v), "", "a module name matches [a-z][a-z0-9_]*, e.g. vision or language", "%s.name %q is not a valid module name", what, clip(v.Value))
			m.Broken = true
		default:
			m.Name = v.Value
		}
	} else {
		p.d.Add(diag.RuleInvalidValue, nodePos(n), "", "add 'name: ...'; exactly one module is named language", "%s has no name", what)
		m.Broken = true
	}
	for _, mf := range moduleFieldTable {
		f, ok := fs[mf.name]
		if !ok || mf.int == nil {
			continue
		}
		lo, hi, hint := mf.bounds(limit)
		v, ok := p.integer(f, mf.name, m.Name, lo, hi, hint)
		if !ok {
			m.Broken, m.SizesUnread = true, true
			continue
		}
		*mf.int(&m) = v
	}
	p.moduleModel(&m, fs)
	p.specModule(&m, fs)
	if !m.Broken && !p.spec {
		p.ranks(&m, fs, limit, suggested)
	}
	return m
}

// peekName returns a module mapping's name when it is a valid one, so that
// diagnostics about its other keys can name the module.
func peekName(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Value == "name" && v.Kind == yaml.ScalarNode && v.Tag == "!!str" && len(v.Value) <= 64 && moduleName.MatchString(v.Value) {
			return v.Value
		}
	}
	return ""
}

// ranks settles num_ranks from dp, or checks that both agree.
func (p *parser) ranks(m *Module, fs map[string]field, limit int, suggested map[string]bool) {
	dense, ok := mul(limit, m.TP, m.GTPRemat, m.CP, m.PP)
	_, hasN := fs["num_ranks"]
	_, hasDP := fs["dp"]
	switch {
	case !hasN && !hasDP:
		if suggested["num_ranks"] || suggested["dp"] {
			m.Broken = true // the misspelt key is already reported
			return
		}
		p.d.Add(diag.RuleInvalidValue, m.Pos(""), m.Name, "add 'num_ranks: N' (dp is then derived) or 'dp: N'", "module needs num_ranks or dp")
		m.Broken = true
	case hasN && hasDP:
		if want, ok2 := mul(limit, dense, m.DP); !ok || !ok2 || want != m.NumRanks {
			p.d.Add(diag.RuleDPMismatch, m.Pos("dp"), m.Name,
				"give only num_ranks and let dp be derived, or fix one of them",
				"num_ranks %d != tp*gtp_remat*cp*pp*dp = %d*%d*%d*%d*%d", m.NumRanks, m.TP, m.GTPRemat, m.CP, m.PP, m.DP)
			m.Broken = true
		}
	case hasN: // dp is derived later, by validate
	default: // dp alone
		n, ok2 := mul(limit, dense, m.DP)
		if !ok || !ok2 {
			p.d.Add(diag.RuleInvalidValue, m.Pos("dp"), m.Name, "lower dp or the other sizes",
				"tp*gtp_remat*cp*pp*dp = %d*%d*%d*%d*%d is more than world_size (%d)", m.TP, m.GTPRemat, m.CP, m.PP, m.DP, limit)
			m.Broken = true
			return
		}
		m.NumRanks = n
	}
}

// mul multiplies positive factors, reporting false when the product
// exceeds limit.
func mul(limit int, xs ...int) (int, bool) {
	p := 1
	for _, x := range xs {
		if x <= 0 || p > limit/x {
			return 0, false
		}
		p *= x
	}
	return p, true
}
