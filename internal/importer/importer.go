// Package importer turns what a job is launched with back into a layout:
// the argv of Megatron-LM's MIMO example (either name generation) and the
// MIMO_* environment of Megatron-Bridge's llava examples. It writes layout
// YAML text; validate reads it like any other layout.
package importer

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/upstream"
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
	mods := &yaml.Node{Kind: yaml.SequenceNode}
	for i := range l.Modules {
		m := &l.Modules[i]
		n := &yaml.Node{Kind: yaml.MappingNode}
		layout.PutStr(n, "name", m.Name, 0)
		layout.PutPlacement(n, m, func(_ string, v int) bool { return v > 1 })
		if m.NumExperts > 0 {
			layout.PutInt(n, "num_experts", m.NumExperts)
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

// names of the grid arguments, plain (PR #5375) and --mimo-* (PR #6894),
// with args.py's defaults (add_hetero_grid_args).
var gridFlags = []struct {
	key string
	def int
}{
	{"encoder-tp", 2}, {"encoder-dp", 2}, {"llm-offset", 4}, {"llm-tp", 2}, {"llm-cp", 1},
	{"llm-pp", 1}, {"llm-dp", 2}, {"llm-ep", 1}, {"llm-expt-tp", 1},
}

// Megatron-LM's own arguments the layout holds.
var megatronFlags = []string{"micro-batch-size", "global-batch-size", "num-experts",
	"tensor-parallel-num-weight-shards", "expert-tensor-parallel-num-weight-shards"}

// MegatronLM reads the argv of a Megatron-LM MIMO launch: torchrun's
// --nnodes and --nproc-per-node when present, then pretrain_mimo.py's grid
// arguments (plain or --mimo-*, not both; a missing one takes args.py's
// default), GTP weight shards, --num-experts and the batch sizes. encoder
// names the encoder module.
func MegatronLM(argv []string, encoder string) (*Layout, error) {
	vals := map[string]string{}
	flags := map[string]bool{}
	gens := map[string]bool{}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		key := strings.ReplaceAll(name, "_", "-")
		if k, ok := strings.CutPrefix(key, "mimo-"); ok && isGrid(k) {
			key = k
			gens["--mimo-*"] = true
		} else if isGrid(key) {
			gens["plain"] = true
		}
		if key == "llm-only" {
			flags[key] = true
			continue
		}
		if !isGrid(key) && !isMegatron(key) && key != "nnodes" && key != "nproc-per-node" {
			continue
		}
		if !hasVal {
			if i+1 >= len(argv) {
				return nil, fmt.Errorf("%s has no value", a)
			}
			i++
			val = argv[i]
		}
		vals[key] = val
	}
	if len(gens) == 2 {
		return nil, fmt.Errorf("the argv mixes the plain grid names (before Megatron-LM PR #6894) and the --mimo-* ones (since): no args.py takes both")
	}
	num := func(key string, def int) (int, error) {
		s, ok := vals[key]
		if !ok {
			return def, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("--%s %q is not a whole number", key, s)
		}
		return n, nil
	}
	g := map[string]int{}
	for _, f := range gridFlags {
		n, err := num(f.key, f.def)
		if err != nil {
			return nil, err
		}
		g[f.key] = n
	}
	m := map[string]int{}
	for _, k := range append(megatronFlags, "nnodes", "nproc-per-node") {
		n, err := num(k, 0)
		if err != nil {
			return nil, err
		}
		m[k] = n
	}
	for _, k := range []string{"encoder-tp", "encoder-dp", "llm-tp", "llm-cp", "llm-pp", "llm-dp", "llm-ep", "llm-expt-tp"} {
		if g[k] < 1 {
			return nil, fmt.Errorf("--%s must be 1 or more, got %d", k, g[k])
		}
	}
	lang := Module{Name: grid.LanguageModule, RankOffset: g["llm-offset"], TP: g["llm-tp"], CP: g["llm-cp"], PP: g["llm-pp"],
		EP: g["llm-ep"], ExptTP: g["llm-expt-tp"], GTPRemat: 1, ExptGTPRemat: 1, NumExperts: m["num-experts"]}
	// args.py reads GTP as the total weight shards, tp times the degree
	// (resolve_tensor_parallel_weight_shards).
	if s := m["tensor-parallel-num-weight-shards"]; s > 0 {
		if s%lang.TP != 0 {
			return nil, fmt.Errorf("--tensor-parallel-num-weight-shards %d is not a multiple of the language tp %d", s, lang.TP)
		}
		lang.GTPRemat = s / lang.TP
	}
	if s := m["expert-tensor-parallel-num-weight-shards"]; s > 0 {
		if s%lang.ExptTP != 0 {
			return nil, fmt.Errorf("--expert-tensor-parallel-num-weight-shards %d is not a multiple of the expert tp %d", s, lang.ExptTP)
		}
		lang.ExptGTPRemat = s / lang.ExptTP
	}
	lang.NumRanks = lang.TP * lang.GTPRemat * lang.CP * lang.PP * g["llm-dp"]
	l := &Layout{Target: "megatron-lm", MicroBatch: m["micro-batch-size"], GlobalBatch: m["global-batch-size"]}
	if gens["plain"] {
		// The newest upstream that takes the plain names.
		l.TargetVersion = lastBefore(upstream.PRMimoNames)
	}
	if !flags["llm-only"] {
		l.Modules = append(l.Modules, Module{Name: encoder, NumRanks: g["encoder-tp"] * g["encoder-dp"], TP: g["encoder-tp"],
			GTPRemat: 1, CP: 1, PP: 1, EP: 1, ExptTP: 1, ExptGTPRemat: 1})
	}
	l.Modules = append(l.Modules, lang)
	for _, mod := range l.Modules {
		l.WorldSize = max(l.WorldSize, mod.RankOffset+mod.NumRanks)
	}
	if n, gp := m["nnodes"], m["nproc-per-node"]; n > 0 && gp > 0 {
		l.Nodes, l.GPUs = n, gp
		l.WorldSize = n * gp
	}
	return l, nil
}

func isGrid(key string) bool {
	for _, f := range gridFlags {
		if f.key == key {
			return true
		}
	}
	return key == "llm-only"
}

func isMegatron(key string) bool {
	for _, k := range megatronFlags {
		if k == key {
			return true
		}
	}
	return false
}

// lastBefore is the target version of upstream just before pr: the PR
// merged before it in upstream.Changes.
func lastBefore(pr int) string {
	prev := ""
	for _, c := range upstream.Changes {
		if c.PR == pr {
			return prev
		}
		prev = strconv.Itoa(c.PR)
	}
	return prev
}
