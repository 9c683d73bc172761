package launch

import (
	"slices"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// gridArgs are the names of the grid arguments of Megatron-LM's
// examples/mimo/training/args.py (add_hetero_grid_args).
type gridArgs struct {
	encoderTP, encoderDP                                    string
	llmOffset, llmTP, llmCP, llmPP, llmDP, llmEP, llmExptTP string
	llmOnly                                                 string
}

// plainArgs are the default names: those of issue 5 and of args.py from
// its start (Megatron-LM PR #5375) until PR #6894.
var plainArgs = gridArgs{
	"--encoder-tp", "--encoder-dp",
	"--llm-offset", "--llm-tp", "--llm-cp", "--llm-pp", "--llm-dp", "--llm-ep", "--llm-expt-tp",
	"--llm-only",
}

// mimoArgs are the names since Megatron-LM PR #6894, which prefixed every
// grid argument with --mimo- and made the plain names an error
// (Options.MimoArgNames).
var mimoArgs = gridArgs{
	"--mimo-encoder-tp", "--mimo-encoder-dp",
	"--mimo-llm-offset", "--mimo-llm-tp", "--mimo-llm-cp", "--mimo-llm-pp", "--mimo-llm-dp", "--mimo-llm-ep", "--mimo-llm-expt-tp",
	"--mimo-llm-only",
}

func (g gridArgs) all() []string {
	return []string{g.encoderTP, g.encoderDP, g.llmOffset, g.llmTP, g.llmCP, g.llmPP, g.llmDP, g.llmEP, g.llmExptTP, g.llmOnly}
}

// megatronArgs writes the layout as the arguments of Megatron-LM's
// examples/mimo/pretrain_mimo.py (examples/mimo/training/args.py:
// add_hetero_grid_args), under the names of g. That script knows one
// encoder at rank 0 and a language grid; a layout it cannot express is a
// diagnostic here too, in case the target rules of validate let it
// through. The notes are caveats to print with the plan.
func megatronArgs(d *diag.List, l *layout.Layout, t *validate.Topology, g gridArgs) (args, notes []string) {
	lang := t.Module(grid.LanguageModule)
	var encs []*grid.Module
	for _, m := range t.Modules {
		if m.Name != grid.LanguageModule {
			encs = append(encs, m)
		}
	}
	pos := func(name, field string) diag.Pos {
		for i := range l.Modules {
			if l.Modules[i].Name == name {
				return l.Modules[i].Pos(field)
			}
		}
		return l.Pos("modules")
	}
	const why = "pretrain_mimo.py's arguments cannot express this; launch with --no-layout-args and a program of your own"
	ok := true
	if t.Mode == validate.Colocated && len(encs) > 0 {
		d.Add("colocated-unsupported", pos(encs[0].Name, "rank_offset"), encs[0].Name, why,
			"pretrain_mimo.py runs modules on disjoint ranks only")
		ok = false
	}
	if len(encs) > 1 {
		d.Add("too-many-encoders", pos(encs[1].Name, ""), encs[1].Name, why,
			"pretrain_mimo.py takes one encoder (%s, %s); the layout has %d", g.encoderTP, g.encoderDP, len(encs))
		ok = false
	}
	for _, m := range t.Modules {
		if m.CP != 1 {
			d.Add("cp-unsupported", pos(m.Name, "cp"), m.Name, why, "pretrain_mimo.py needs cp 1; the module has cp %d", m.CP)
			ok = false
		}
	}
	if len(encs) == 1 {
		e := encs[0]
		if e.RankOffset != 0 && t.Mode != validate.Colocated {
			d.Add("encoder-not-first", pos(e.Name, "rank_offset"), e.Name, why,
				"pretrain_mimo.py places the encoder at rank 0; it starts at %d", e.RankOffset)
			ok = false
		}
		if e.PP != 1 || e.EP != 1 || e.ExptTP != 1 || e.GTPRemat != 1 || e.ExptGTPRemat != 1 {
			d.Add("encoder-parallelism-unsupported", pos(e.Name, ""), e.Name, why,
				"pretrain_mimo.py gives the encoder only tp and dp; it has pp %d, ep %d, expt_tp %d, gtp_remat %d, expt_gtp_remat %d",
				e.PP, e.EP, e.ExptTP, e.GTPRemat, e.ExptGTPRemat)
			ok = false
		}
	}
	if !ok || lang == nil {
		return nil, nil
	}

	n := strconv.Itoa
	if len(encs) == 1 {
		e := encs[0]
		args = append(args, g.encoderTP, n(e.TP), g.encoderDP, n(e.DP))
	}
	args = append(args,
		g.llmOffset, n(lang.RankOffset),
		g.llmTP, n(lang.TP),
		g.llmCP, n(lang.CP),
		g.llmPP, n(lang.PP),
		g.llmDP, n(lang.DP),
		g.llmEP, n(lang.EP),
		g.llmExptTP, n(lang.ExptTP))
	// args.py has no GTP arguments of its own: it reads Megatron's global
	// ones, whose value is the total shard count, tp*gtp_remat, the GTP
	// degree being that over --llm-tp (--mimo-llm-tp).
	if lang.GTPRemat > 1 {
		args = append(args, "--tensor-parallel-num-weight-shards", n(lang.TP*lang.GTPRemat))
	}
	if lang.ExptGTPRemat > 1 {
		args = append(args, "--expert-tensor-parallel-num-weight-shards", n(lang.ExptTP*lang.ExptGTPRemat))
	}
	// GTP came to args.py (PR #6570) shortly before the --mimo- names
	// (PR #6894): a checkout that takes the plain names may predate it.
	if g == plainArgs && (lang.GTPRemat > 1 || lang.ExptGTPRemat > 1) {
		notes = append(notes, "gtp_remat: the MIMO example takes GTP since Megatron-LM PR #6570; use a checkout at least that new")
	}
	if t.Batch != nil {
		args = append(args, "--micro-batch-size", n(t.Batch.MicroBatchSize))
		if t.Batch.GlobalBatchSize > 0 {
			args = append(args, "--global-batch-size", n(t.Batch.GlobalBatchSize))
		}
	}
	if len(encs) == 0 {
		args = append(args, g.llmOnly)
	}
	return args, notes
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
