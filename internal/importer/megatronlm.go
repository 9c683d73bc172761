package importer

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/megatron"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// torchrun's options the layout's cluster comes from, in both spellings
// (torch/distributed/run.py).
var torchrunCluster = map[string]string{
	"--nnodes": "nnodes", "--nproc-per-node": "nproc-per-node", "--nproc_per_node": "nproc-per-node",
}

// MegatronLM reads the argv of a Megatron-LM MIMO launch: torchrun's
// --nnodes and --nproc-per-node when the argv starts with a launcher (the
// words before the first *.py), then pretrain_mimo.py's arguments: the
// grid (plain or --mimo-*, not both; a missing one takes args.py's
// default), GTP weight shards, --num-experts, the batch sizes, the
// language model and the training settings. Every other argument must be
// one Megatron-LM's parser takes (megatron.Option), as upstream refuses
// the rest at start-up. encoder names the encoder module.
func MegatronLM(argv []string, encoder string) (*Layout, error) {
	launcher, prog := splitProgram(argv)
	names, err := generation(prog)
	if err != nil {
		return nil, err
	}
	a, err := readArgs(prog, names)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(launcher); i++ {
		name, val, hasVal := strings.Cut(launcher[i], "=")
		key, ok := torchrunCluster[name]
		if !ok {
			continue
		}
		if !hasVal {
			if i+1 >= len(launcher) {
				return nil, fmt.Errorf("%s has no value", name)
			}
			i++
			val = launcher[i]
		}
		a.vals["--"+key] = val
	}
	return a.layout(names, encoder)
}

// splitProgram cuts argv at its program, the first word ending in .py:
// the launcher's words before it, the program's arguments after. Without
// one, argv is the program's arguments alone.
func splitProgram(argv []string) (launcher, prog []string) {
	for i, a := range argv {
		if !strings.HasPrefix(a, "-") && path.Ext(a) == ".py" {
			return argv[:i], argv[i+1:]
		}
	}
	return nil, argv
}

// generation is the grid name set prog uses: the plain names (before
// Megatron-LM PR #6894) or the --mimo-* ones, the newest when it uses
// none.
func generation(prog []string) (megatron.Grid, error) {
	plain, mimo := false, false
	for _, a := range prog {
		name, _, _ := strings.Cut(a, "=")
		for i, n := range megatron.Plain.All() {
			plain = plain || name == n
			mimo = mimo || name == megatron.Mimo.All()[i]
		}
	}
	if plain && mimo {
		return megatron.Grid{}, fmt.Errorf("the argv mixes the plain grid names (before Megatron-LM PR #6894) and the --mimo-* ones (since): no args.py takes both")
	}
	if plain {
		return megatron.Plain, nil
	}
	return megatron.Mimo, nil
}

// args are the program's arguments as argparse keeps them: the last
// value of each option that takes one, and the flags given.
type args struct {
	vals  map[string]string
	flags map[string]bool
}

// readArgs reads prog as Megatron-LM's parser would, refusing an option
// it does not take (with the nearest one it does), a flag given a value,
// an option without its value, and a word that is no option's value.
func readArgs(prog []string, g megatron.Grid) (*args, error) {
	a := &args{vals: map[string]string{}, flags: map[string]bool{}}
	for i := 0; i < len(prog); i++ {
		w := prog[i]
		if !strings.HasPrefix(w, "-") {
			return nil, fmt.Errorf("%q is no argument's value (Megatron-LM's parser takes no positional arguments)", w)
		}
		name, val, hasVal := strings.Cut(w, "=")
		takes, ok := megatron.Option(name, g)
		if !ok {
			return nil, megatron.Unknown(name, g)
		}
		if !takes {
			if hasVal {
				return nil, fmt.Errorf("%s takes no value, got %q", name, val)
			}
			a.flags[name] = true
			continue
		}
		if !hasVal {
			if i+1 >= len(prog) || isOption(prog[i+1]) {
				return nil, fmt.Errorf("%s has no value", name)
			}
			i++
			val = prog[i]
		}
		// An option of several values (nargs "+", "*") takes the words up
		// to the next option.
		for i+1 < len(prog) && !isOption(prog[i+1]) {
			i++
			val += " " + prog[i]
		}
		a.vals[name] = val
	}
	return a, nil
}

// isOption tells an option from a value as argparse does: a word that
// starts with - and is not a negative number.
func isOption(w string) bool {
	if !strings.HasPrefix(w, "-") || w == "-" {
		return false
	}
	_, err := strconv.ParseFloat(w, 64)
	return err != nil
}

// count reads a whole-number option, def when not given.
func (a *args) count(name string, def int) (int, error) {
	s, ok := a.vals[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q is not a whole number", name, s)
	}
	return n, nil
}

// layout makes the layout of the arguments read.
func (a *args) layout(names megatron.Grid, encoder string) (*Layout, error) {
	g := map[string]int{}
	for i, f := range megatron.GridArgs {
		name := names.Layout()[i]
		n, err := a.count(name, f.Default)
		if err != nil {
			return nil, err
		}
		if n < 1 && f.Key != "llm-offset" {
			return nil, fmt.Errorf("%s must be 1 or more, got %d", name, n)
		}
		g[f.Key] = n
	}
	m := map[string]int{}
	for _, k := range append(megatron.Counts, "--nnodes", "--nproc-per-node") {
		n, err := a.count(k, 0)
		if err != nil {
			return nil, err
		}
		m[k] = n
	}
	lang := Module{Name: grid.LanguageModule, RankOffset: g["llm-offset"], TP: g["llm-tp"], CP: g["llm-cp"], PP: g["llm-pp"],
		EP: g["llm-ep"], ExptTP: g["llm-expt-tp"], GTPRemat: 1, ExptGTPRemat: 1, NumExperts: m[megatron.NumExperts]}
	// args.py reads GTP as the total weight shards, tp times the degree
	// (resolve_tensor_parallel_weight_shards).
	if s := m[megatron.WeightShards]; s > 0 {
		if s%lang.TP != 0 {
			return nil, fmt.Errorf("%s %d is not a multiple of the language tp %d", megatron.WeightShards, s, lang.TP)
		}
		lang.GTPRemat = s / lang.TP
	}
	if s := m[megatron.ExpertShards]; s > 0 {
		if s%lang.ExptTP != 0 {
			return nil, fmt.Errorf("%s %d is not a multiple of the expert tp %d", megatron.ExpertShards, s, lang.ExptTP)
		}
		lang.ExptGTPRemat = s / lang.ExptTP
	}
	var err error
	if lang.NumRanks, err = product("the language module's ranks (tp x gtp x cp x pp x dp)", lang.TP, lang.GTPRemat, lang.CP, lang.PP, g["llm-dp"]); err != nil {
		return nil, err
	}
	if lang.RankOffset > layout.MaxWorldSize {
		return nil, fmt.Errorf("the language module's offset %d is more than %d, the most a layout allows", lang.RankOffset, layout.MaxWorldSize)
	}
	if err := a.pipeline(&lang); err != nil {
		return nil, err
	}
	lang.Freeze = a.flags[megatron.FreezeLanguage]
	l := &Layout{Target: "megatron-lm", MicroBatch: m[megatron.MicroBatch], GlobalBatch: m[megatron.GlobalBatch]}
	if names == megatron.Plain && a.usesGrid(names) {
		// The newest upstream that takes the plain names.
		l.TargetVersion = lastBefore(upstream.PRMimoNames)
	}
	if l.Model, err = a.model(); err != nil {
		return nil, err
	}
	l.Training = a.training()
	if !a.flags[names.LLMOnly] {
		n, err := product("the encoder's ranks (tp x dp)", g["encoder-tp"], g["encoder-dp"])
		if err != nil {
			return nil, err
		}
		l.Modules = append(l.Modules, Module{Name: encoder, NumRanks: n, TP: g["encoder-tp"],
			GTPRemat: 1, CP: 1, PP: 1, EP: 1, ExptTP: 1, ExptGTPRemat: 1, Freeze: a.flags[megatron.FreezeEncoder]})
	}
	l.Modules = append(l.Modules, lang)
	for _, mod := range l.Modules {
		l.WorldSize = max(l.WorldSize, mod.RankOffset+mod.NumRanks)
	}
	if n, gp := m["--nnodes"], m["--nproc-per-node"]; n > 0 && gp > 0 {
		l.Nodes, l.GPUs = n, gp
		if l.WorldSize, err = product("torchrun's world (--nnodes x --nproc-per-node)", n, gp); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// pipeline reads the language module's virtual pipeline size and uneven
// split back (megatron's pipeline arguments, named as the layout keys).
func (a *args) pipeline(m *Module) error {
	for _, c := range []struct {
		flag string
		to   *int
	}{{megatron.VirtualStages, &m.VPP}, {megatron.DecoderFirst, &m.Split.First}, {megatron.DecoderLast, &m.Split.Last}} {
		n, err := a.count(c.flag, 0)
		if err != nil {
			return err
		}
		*c.to = n
	}
	m.Split.AccountEmbedding = a.flags[megatron.AccountEmbedding]
	m.Split.AccountLoss = a.flags[megatron.AccountLoss]
	m.Split.Layout = a.vals[megatron.PipelineLayout]
	return nil
}

func (a *args) usesGrid(g megatron.Grid) bool {
	for _, n := range g.All() {
		if _, ok := a.vals[n]; ok || a.flags[n] {
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
