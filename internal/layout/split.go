package layout

import (
	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/model"
)

// maxLayoutString bounds pipeline_model_parallel_layout as written (its
// "x*n" repeats unroll further, bounded by the model package).
const maxLayoutString = 64 << 10

// split reads a module's freeze key and its uneven pipeline split, named
// as Megatron-LM's arguments. Whether it fits the model and pp is the model rules' to say
// (model.Check), which also need num_layers.
func (p *parser) split(m *Module, fs map[string]field) {
	s := &m.Split
	for _, k := range []struct {
		name string
		to   *int
		hint string
	}{
		{"decoder_first_pipeline_num_layers", &s.First, "transformer layers on the first pipeline stage"},
		{"decoder_last_pipeline_num_layers", &s.Last, "transformer layers on the last pipeline stage"},
	} {
		if f, ok := fs[k.name]; ok {
			if v, ok := p.integer(f, k.name, m.Name, 1, maxDim, k.hint); ok {
				*k.to = v
			} else {
				m.Broken, m.SizesUnread = true, true
			}
		}
	}
	for _, k := range []struct {
		name string
		to   *bool
	}{
		{"account_for_embedding_in_pipeline_split", &s.AccountEmbedding},
		{"account_for_loss_in_pipeline_split", &s.AccountLoss},
	} {
		if f, ok := fs[k.name]; ok {
			if v, ok := p.boolean(f, k.name, m.Name); ok {
				*k.to = v
			} else {
				m.Broken, m.SizesUnread = true, true
			}
		}
	}
	if f, ok := fs["freeze"]; ok {
		if v, ok := p.boolean(f, "freeze", m.Name); ok {
			m.Freeze = v
		} else {
			m.Broken = true
		}
	}
	f, ok := fs["pipeline_model_parallel_layout"]
	if !ok {
		return
	}
	v := resolve(f.value)
	hint := `Megatron's layout string: stages of E (embedding), t (decoder layer), m (MTP layer), L (loss) separated by |, with x*n and (...)*n repeats, e.g. "Et*3|(t*4|)*6,t*3L"`
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Value == "" || len(v.Value) > maxLayoutString {
		p.d.Add(diag.RuleInvalidValue, nodePos(v), m.Name, hint, "pipeline_model_parallel_layout must be a layout string, got %s", describe(v))
		m.Broken, m.SizesUnread = true, true
		return
	}
	if _, err := model.LayoutStages(v.Value); err != nil {
		p.d.Add(diag.RuleInvalidValue, nodePos(v), m.Name, hint, "pipeline_model_parallel_layout: %v", err)
		m.Broken, m.SizesUnread = true, true
		return
	}
	s.Layout = v.Value
}
