package launch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// megatronArgs writes the layout as the arguments of Megatron-LM's
// examples/mimo/pretrain_mimo.py (examples/mimo/training/args.py:
// add_hetero_grid_args). That script knows one encoder at rank 0 and a
// language grid; a layout it cannot express is a diagnostic here too, in
// case the target rules of validate let it through. The notes are caveats
// to print with the plan.
func megatronArgs(d *diag.List, l *layout.Layout, t *validate.Topology) (args, notes []string) {
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
			"pretrain_mimo.py takes one encoder (--encoder-tp, --encoder-dp); the layout has %d", len(encs))
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
		args = append(args, "--encoder-tp", n(e.TP), "--encoder-dp", n(e.DP))
	}
	args = append(args,
		"--llm-offset", n(lang.RankOffset),
		"--llm-tp", n(lang.TP),
		"--llm-cp", n(lang.CP),
		"--llm-pp", n(lang.PP),
		"--llm-dp", n(lang.DP),
		"--llm-ep", n(lang.EP),
		"--llm-expt-tp", n(lang.ExptTP))
	// args.py has no GTP arguments; these are Megatron's global ones, whose
	// value is the total shard count tp*gtp_remat (arguments.py).
	if lang.GTPRemat > 1 {
		args = append(args, "--tensor-parallel-num-weight-shards", n(lang.TP*lang.GTPRemat))
	}
	if lang.ExptGTPRemat > 1 {
		args = append(args, "--expert-tensor-parallel-num-weight-shards", n(lang.ExptTP*lang.ExptGTPRemat))
	}
	if lang.GTPRemat > 1 || lang.ExptGTPRemat > 1 {
		notes = append(notes, fmt.Sprintf("gtp_remat: pretrain_mimo.py's grid arguments have no GTP size and size the language grid as llm_tp*llm_cp*llm_pp*llm_dp = %d ranks, not the layout's %d; the weight-shard arguments are passed, but check that your pretrain_mimo.py supports GTP before launching",
			lang.TP*lang.CP*lang.PP*lang.DP, lang.NumRanks))
	}
	if t.Batch != nil {
		args = append(args, "--micro-batch-size", n(t.Batch.MicroBatchSize))
		if t.Batch.GlobalBatchSize > 0 {
			args = append(args, "--global-batch-size", n(t.Batch.GlobalBatchSize))
		}
	}
	if len(encs) == 0 {
		args = append(args, "--llm-only")
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
