package launch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/megatron"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// megatronArgs writes the layout as the arguments of Megatron-LM's
// examples/mimo/pretrain_mimo.py (examples/mimo/training/args.py:
// add_hetero_grid_args), under the names of g. That script knows one
// encoder at rank 0 and a language grid of cp 1: validate's megatron-lm
// rules (too-many-encoders, colocated-unsupported, encoder-not-first,
// cp-unsupported, encoder-parallelism-unsupported) refuse every other
// layout before a plan is made.
func megatronArgs(l *layout.Layout, t *topo.Topology, g megatron.Grid) (args []string) {
	lang := t.Module(grid.LanguageModule)
	var encs []*grid.Module
	for _, m := range t.Modules {
		if m.Name != grid.LanguageModule {
			encs = append(encs, m)
		}
	}
	if lang == nil {
		return nil
	}

	n := strconv.Itoa
	if len(encs) == 1 {
		e := encs[0]
		args = append(args, g.EncoderTP, n(e.TP), g.EncoderDP, n(e.DP))
	}
	args = append(args,
		g.LLMOffset, n(lang.RankOffset),
		g.LLMTP, n(lang.TP),
		g.LLMCP, n(lang.CP),
		g.LLMPP, n(lang.PP),
		g.LLMDP, n(lang.DP),
		g.LLMEP, n(lang.EP),
		g.LLMExptTP, n(lang.ExptTP))
	// args.py has no GTP arguments of its own: it reads Megatron's global
	// ones, whose value is the total shard count, tp*gtp_remat, the GTP
	// degree being that over --llm-tp (--mimo-llm-tp).
	if lang.GTPRemat > 1 {
		args = append(args, megatron.WeightShards, n(lang.TP*lang.GTPRemat))
	}
	if lang.ExptGTPRemat > 1 {
		args = append(args, megatron.ExpertShards, n(lang.ExptTP*lang.ExptGTPRemat))
	}
	if e := numExperts(l); e > 0 {
		args = append(args, megatron.NumExperts, n(e))
	}
	if t.Batch != nil {
		args = append(args, megatron.MicroBatch, n(t.Batch.MicroBatchSize))
		if t.Batch.GlobalBatchSize > 0 {
			args = append(args, megatron.GlobalBatch, n(t.Batch.GlobalBatchSize))
		}
	}
	args = append(args, modelArgs(l)...)
	args = append(args, splitArgs(l)...)
	args = append(args, freezeArgs(l)...)
	args = append(args, trainingArgs(l)...)
	if len(encs) == 0 {
		args = append(args, g.LLMOnly)
	}
	return args
}

// numExperts is the language module's num_experts, 0 when not given:
// Megatron-LM's --num-experts, which args.py checks against --llm-ep.
func numExperts(l *layout.Layout) int {
	for _, m := range l.Modules {
		if m.Name != grid.LanguageModule {
			continue
		}
		if m.NumExperts == 0 && m.Model != nil {
			return m.Model.Config.NumExperts
		}
		return m.NumExperts
	}
	return 0
}

// clashes returns the flags of layout that the user's arguments already
// set (as --flag or --flag=value), in layout order.
func clashes(user, layoutArgs []string) []string {
	var out []string
	for _, a := range layoutArgs {
		if !strings.HasPrefix(a, "--") || slices.Contains(out, a) {
			continue
		}
		for _, u := range user {
			if u == a || strings.HasPrefix(u, a+"=") {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// megatronProgram appends the layout's arguments to prog, refusing
// program arguments that set what the layout sets (or use the other name
// set), and reporting a plan that Megatron-LM would stop for want of a
// micro-batch size.
func megatronProgram(d *diag.List, t *topo.Topology, prog []string) ([]string, error) {
	l := t.Layout
	v := l.TargetVersion
	names, other := megatron.GridFor(v)
	args := megatronArgs(l, t, names)
	user := prog[1:]
	if trainingConflicts(d, l, user) {
		// The program contradicts the layout: reported against the
		// layout's training keys, before the repeats below.
		return append(prog, args...), nil
	}
	// Every grid name counts, emitted or not: --llm-only beside an encoder
	// contradicts the layout as much as a second --llm-tp; so do GTP
	// shards the layout does not have.
	owned := append(slices.Clone(args), names.Layout()...)
	owned = append(owned, megatron.WeightShards, megatron.ExpertShards)
	if slices.Contains(args, megatron.BF16) && len(clashes(user, []string{megatron.FP16})) > 0 {
		return nil, fmt.Errorf("the program arguments set %s, but the plan trains the model in bf16 (%s), the precision validate, estimate and suggest assumed: drop %s", megatron.FP16, megatron.BF16, megatron.FP16)
	}
	if clash := clashes(user, owned); len(clash) > 0 {
		return nil, fmt.Errorf("the program arguments already set %s, which launch-plan derives from the layout: drop them, or turn the layout arguments off", strings.Join(clash, ", "))
	}
	if clash := clashes(user, other.Layout()); len(clash) > 0 {
		when := "before Megatron-LM PR #6894"
		if v.Has(upstream.PRMimoNames) {
			when = "since Megatron-LM PR #6894"
		}
		return nil, fmt.Errorf("the program arguments use %s, but target version %s names the grid arguments %s (%s...): give the target_version (--target-version) of your Megatron-LM checkout, or drop them",
			strings.Join(clash, ", "), v, when, names.LLMTP)
	}
	if args != nil && t.Batch == nil {
		microBatch(d, l, t, user, names)
	}
	return append(prog, args...), nil
}

// microBatch reports a plan without --micro-batch-size (Megatron-LM's
// validate_args asserts it; with an encoder args.py multiplies it first),
// or with one from the program that fails args.py's fan-out check.
func microBatch(d *diag.List, l *layout.Layout, t *topo.Topology, user []string, g megatron.Grid) {
	pos := l.Pos("batch")
	text, ok := flagValue(user, megatron.MicroBatch)
	if !ok {
		d.Add(diag.RuleMicroBatchRequired, pos, "",
			"give batch: {micro_batch_size: N} in the layout, or --micro-batch-size N after the program",
			"the plan has no --micro-batch-size, which Megatron-LM requires")
		return
	}
	mbs, err := strconv.Atoi(text)
	if err != nil || mbs < 1 {
		d.Add(diag.RuleMicroBatchRequired, pos, "", "give --micro-batch-size a whole number of 1 or more",
			"the program's --micro-batch-size %q is not a whole number of 1 or more", text)
		return
	}
	lang := t.Module(grid.LanguageModule)
	for _, e := range t.Modules {
		if e == lang || lang == nil {
			continue
		}
		lanes := lang.DP * lang.GTPRemat
		if (mbs*lanes)%e.DP != 0 {
			d.Add(diag.RuleMicroBatchRequired, pos, e.Name,
				fmt.Sprintf("give a --micro-batch-size that makes %s divisible by %d", "micro-batch-size x "+strconv.Itoa(lanes), e.DP),
				"the program's --micro-batch-size %d x %s %d x GTP %d is not divisible by %s %d, which Megatron-LM's args.py checks at start-up",
				mbs, g.LLMDP, lang.DP, lang.GTPRemat, g.EncoderDP, e.DP)
		}
	}
}

// flagValue returns the value of the last --name VALUE or --name=VALUE
// in args, as argparse keeps the last.
func flagValue(args []string, name string) (string, bool) {
	val, ok := "", false
	for i, a := range args {
		switch {
		case a == name && i+1 < len(args):
			val, ok = args[i+1], true
		case strings.HasPrefix(a, name+"="):
			val, ok = a[len(name)+1:], true
		}
	}
	return val, ok
}
