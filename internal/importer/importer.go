// Package importer turns what a job is launched with back into a layout:
// the argv of Megatron-LM's MIMO example (either name generation) and the
// MIMO_* environment of Megatron-Bridge's llava examples. It writes layout
// YAML text; validate reads it like any other layout.
package importer

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// Module is one module of an imported layout: its name, placement,
// sizes and num_experts.
type Module = layout.Module

// Layout is an imported layout.
type Layout struct {
	Name          string
	Target        string
	TargetVersion string
	WorldSize     int
	Nodes, GPUs   int // cluster, 0 when unknown
	MicroBatch    int
	GlobalBatch   int
	Modules       []Module
	// Model is the language module's model, Training the training
	// settings; nil when the launch gives none.
	Model, Training []Setting
	// Env is the layout's env block, as a launch-plan topology carries it
	// (each value text); nil when the launch gives none.
	Env []layout.EnvVar
}

// YAML writes l as a layout file, through layout's writer: each module's
// placement and its sizes above 1.
func (l *Layout) YAML() (string, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	layout.PutInt(root, "version", 1)
	if l.Name != "" {
		layout.PutStr(root, "name", l.Name, yaml.DoubleQuotedStyle)
	}
	layout.PutStr(root, "target", l.Target, 0)
	if l.TargetVersion != "" {
		layout.PutStr(root, "target_version", l.TargetVersion, yaml.DoubleQuotedStyle)
	}
	if l.Nodes > 0 {
		c := &yaml.Node{Kind: yaml.MappingNode}
		layout.PutInt(c, "nodes", l.Nodes)
		layout.PutInt(c, "gpus_per_node", l.GPUs)
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "cluster"}, c)
	} else {
		layout.PutInt(root, "world_size", l.WorldSize)
	}
	if l.MicroBatch > 0 {
		b := &yaml.Node{Kind: yaml.MappingNode}
		layout.PutInt(b, "micro_batch_size", l.MicroBatch)
		if l.GlobalBatch > 0 {
			layout.PutInt(b, "global_batch_size", l.GlobalBatch)
		}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "batch"}, b)
	}
	if len(l.Training) > 0 {
		t, err := settings(l.Training)
		if err != nil {
			return "", err
		}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "training"}, t)
	}
	if len(l.Env) > 0 {
		e := &yaml.Node{Kind: yaml.MappingNode}
		for _, v := range l.Env {
			layout.PutStr(e, v.Name, v.Value, yaml.DoubleQuotedStyle)
		}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "env"}, e)
	}
	mods := &yaml.Node{Kind: yaml.SequenceNode}
	for i := range l.Modules {
		m := &l.Modules[i]
		n := &yaml.Node{Kind: yaml.MappingNode}
		layout.PutStr(n, "name", m.Name, 0)
		layout.PutPlacement(n, m, func(_ string, v int) bool { return v > 1 })
		if m.NumExperts > 0 {
			layout.PutInt(n, "num_experts", m.NumExperts)
		}
		putSplit(n, m)
		if m.Freeze {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "freeze"}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		}
		if m.Name == grid.LanguageModule && len(l.Model) > 0 {
			md, err := settings(l.Model)
			if err != nil {
				return "", err
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "model"}, md)
		}
		mods.Content = append(mods.Content, n)
	}
	root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "modules"}, mods)
	var b strings.Builder
	if err := layout.Encode(&b, &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// settings is a mapping of imported settings, each value read from its
// YAML text (so a list stays a flow list and a quoted name quoted).
func settings(ss []Setting) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, s := range ss {
		var v yaml.Node
		if err := yaml.Unmarshal([]byte(s.Value), &v); err != nil || len(v.Content) != 1 {
			return nil, fmt.Errorf("write layout: %s: %q is not a YAML value", s.Key, s.Value)
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s.Key}, v.Content[0])
	}
	return n, nil
}

// putSplit writes a module's uneven pipeline split, the keys given.
func putSplit(n *yaml.Node, m *Module) {
	s := m.Split
	if s.First > 0 {
		layout.PutInt(n, "decoder_first_pipeline_num_layers", s.First)
	}
	if s.Last > 0 {
		layout.PutInt(n, "decoder_last_pipeline_num_layers", s.Last)
	}
	for _, b := range []struct {
		key string
		on  bool
	}{{"account_for_embedding_in_pipeline_split", s.AccountEmbedding}, {"account_for_loss_in_pipeline_split", s.AccountLoss}} {
		if b.on {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: b.key}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		}
	}
	if s.Layout != "" {
		layout.PutStr(n, "pipeline_model_parallel_layout", s.Layout, yaml.DoubleQuotedStyle)
	}
}

// product multiplies sizes, refusing one past layout.MaxWorldSize (the
// most any layout size may be, which the layout parser refuses): a
// product of launch values is never let wrap past 2^64 (--encoder-dp
// 4611686018427387905 times tp 4 gave dp 1).
func product(what string, factors ...int) (int, error) {
	p := 1
	for _, f := range factors {
		if f < 0 || f > layout.MaxWorldSize || f > 0 && p > layout.MaxWorldSize/f {
			return 0, fmt.Errorf("%s is more than %d, the most a layout allows", what, layout.MaxWorldSize)
		}
		p *= f
	}
	return p, nil
}
