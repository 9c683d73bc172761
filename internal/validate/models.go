package validate

import (
	"fmt"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
)

// RuleGPUMemoryShort is reported when a module's estimate exceeds the
// GPU's memory.
const RuleGPUMemoryShort = diag.RuleGPUMemoryShort

// ModuleEstimate is one module's model estimate, for the modules that have
// a model and sound sizes.
type ModuleEstimate struct {
	Name     string
	Index    int // into Layout.Modules
	Parallel model.Parallel
	Training model.Training
	Estimate model.Estimate
}

// models runs the model rules of every module with a model, whatever the
// other modules' state, then estimates the memory of those whose sizes and
// model are sound and checks it against cluster.gpu_memory.
func (c *checker) models() {
	c.optimizer()
	c.deferral()
	c.teCrossEntropy()
	c.deviceConnections()
	for i := range c.l.Modules {
		lm := &c.l.Modules[i]
		if lm.Model == nil && !lm.SizesUnread && lm.PP == 1 && lm.VPP > 1 {
			// Megatron's argument check needs no model (arguments.py:1002);
			// with a model, model.Check reports it beside the split's rules.
			c.d.Add(diag.RuleVPPNeedsPP, lm.Pos("vpp"), lm.Name, "remove vpp, or use pp > 1",
				"vpp %d needs pp > 1: the interleaved schedule interleaves pipeline stages", lm.VPP)
		}
		if lm.Model == nil || lm.SizesUnread || lm.TP == 0 || lm.PP == 0 || lm.CP == 0 {
			continue
		}
		par := c.parallel(i)
		tr := c.training(i)
		bad := false
		for _, v := range model.Check(lm.Model.Config, par, tr) {
			c.d.Add(diag.RuleID(v.Rule), c.modelPos(lm, v.Key), lm.Name, v.Hint, "%s", v.Message)
			bad = bad || diag.SeverityOf(diag.RuleID(v.Rule)) == diag.Error
		}
		if bad || c.sized[i] == nil {
			continue
		}
		e := model.Total(lm.Model.Config, par, tr)
		c.r.Estimates = append(c.r.Estimates, ModuleEstimate{
			Name: lm.Name, Index: i, Parallel: par, Training: tr, Estimate: e,
		})
	}
	if c.l.GPUMemory > 0 {
		CheckMemory(c.r, c.l.GPUMemory, fmt.Sprintf("cluster.gpu_memory (%s, line %d)", GiB(float64(c.l.GPUMemory)), c.l.Pos("cluster.gpu_memory").Line))
	}
}

// parallel is module i's sizes as the model package reads them; dp is
// derived when the sizes are sound.
func (c *checker) parallel(i int) model.Parallel {
	lm := &c.l.Modules[i]
	p := model.Parallel{
		NumRanks: lm.NumRanks, TP: lm.TP, GTPRemat: lm.GTPRemat, CP: lm.CP, PP: lm.PP, VPP: lm.VPP, Split: lm.Split,
		EP: lm.EP, ExptTP: lm.ExptTP, ExptGTPRemat: lm.ExptGTPRemat,
	}
	if m := c.sized[i]; m != nil {
		p.DP = m.DP
	}
	if p.VPP == 1 {
		p.VPP = 0 // Megatron reads a vpp of 1 as none
	}
	return p
}

// training is module i's training options: the layout's, with its micro
// batch as the runtime splits the batch (docs/estimate.md).
func (c *checker) training(i int) model.Training {
	m := c.sized[i]
	if m == nil {
		t := c.l.ModelTraining(&c.l.Modules[i], 0)
		t.Communicators = c.bridges(i)
		return t
	}
	lang, langLanes := c.sizedLanguage(), 0
	if lang >= 0 {
		langLanes = lanes(c.sized[lang])
	}
	return Training(c.l, i, m.DP, lang, langLanes, c.bridges(i))
}

// Training is the training options validate estimates module i's memory
// with, its sizes sound and its data-parallel size dp: the layout's, with
// its micro batch as the runtime splits the batch (docs/estimate.md).
// lang is the language module's index (-1 when it has no sound sizes),
// langLanes its dp x gtp_remat, and comm the communicators MIMO adds for
// module i (0 when it shares its ranks with every other module, as in a
// colocated layout). suggest prices colocated memory with it exactly as
// validate does.
func Training(l *layout.Layout, i, dp, lang, langLanes, comm int) model.Training {
	t := l.ModelTraining(&l.Modules[i], dp)
	t.Communicators = comm
	b := l.Batch
	if b == nil {
		return t
	}
	t.NumMicrobatches = 0
	switch {
	case l.Target == layout.TargetMegatronBridge:
		// micro_batch_size is the global MIMO micro-batch.
		if mb, ok := MicroBatch(l, &l.Modules[i], dp, 0); ok {
			t.MicroBatchSize = mb
		}
		if g := b.GlobalBatchSize; g > 0 && g%b.MicroBatchSize == 0 {
			t.NumMicrobatches = g / b.MicroBatchSize
		}
	case lang >= 0:
		// micro_batch_size is per language data lane; an encoder splits
		// each step's samples over its dp.
		step := b.MicroBatchSize * langLanes
		if mb, ok := MicroBatch(l, &l.Modules[i], dp, langLanes); ok {
			t.MicroBatchSize = mb
		}
		if g := b.GlobalBatchSize; g > 0 && g%step == 0 {
			t.NumMicrobatches = g / step
		}
	}
	if lang >= 0 && lang != i && t.Communicators > 0 {
		// An encoder on its own ranks is the first stage of the job's
		// pipeline (examples/mimo/pretrain_mimo.py:144 runs Megatron's
		// pipeline schedule over the encoder and language stages): under
		// 1F1B it holds a micro-batch for every stage after it.
		t.MicrobatchesInFlight = 1 + l.Modules[lang].PP
		if n := t.NumMicrobatches; n > 0 {
			t.MicrobatchesInFlight = min(t.MicrobatchesInFlight, n)
		}
	}
	return t
}

// bridges counts the communicators with peers that MIMO adds for module
// i: one between the language module and each encoder on other ranks
// (the embeddings an encoder hands to the language model).
func (c *checker) bridges(i int) int {
	mods := c.l.Modules
	if len(mods) < 2 {
		return 0
	}
	apart := func(a, b *layout.Module) bool { return a.End() <= b.RankOffset || b.End() <= a.RankOffset }
	n := 0
	me := &mods[i]
	for j := range mods {
		o := &mods[j]
		if j == i || !apart(me, o) {
			continue
		}
		if me.Name == grid.LanguageModule || o.Name == grid.LanguageModule {
			n++
		}
	}
	return n
}

// modelPos is where a model rule points: the model key, the module key or
// the training key its Violation names.
func (c *checker) modelPos(lm *layout.Module, key string) diag.Pos {
	switch {
	case strings.HasPrefix(key, "model."):
		return lm.Model.Pos(strings.TrimPrefix(key, "model."))
	case strings.HasPrefix(key, "training."):
		if c.l.Given(key) {
			return c.l.Pos(key)
		}
		return lm.Model.Pos("")
	}
	if lm.Given(key) {
		return lm.Pos(key)
	}
	return lm.Pos("model")
}

// SharedBytes is what modules on one span need per GPU together, from
// each one's total: their sum with one CUDA context, since one process
// runs them all. CheckMemory compares it with the limit; suggest prunes
// colocated candidates with it, from lower bounds of each.
func SharedBytes(each ...float64) float64 {
	total := -float64(len(each)-1) * model.CUDAContextBytes
	for _, b := range each {
		total += b
	}
	return total
}

// CheckMemory reports gpu-memory-short for every estimated module whose
// total exceeds limit bytes, once per module; what names the limit.
func CheckMemory(r *Result, limit int64, what string) {
	// Colocated modules (the same span) share every GPU: their estimates
	// add up, with one CUDA context, since one process runs both.
	type span struct{ off, n int }
	var order []span
	groups := map[span][]int{}
	for i := range r.Estimates {
		lm := &r.Layout.Modules[r.Estimates[i].Index]
		s := span{lm.RankOffset, lm.NumRanks}
		if _, ok := groups[s]; !ok {
			order = append(order, s)
		}
		groups[s] = append(groups[s], i)
	}
	for _, s := range order {
		idx := groups[s]
		each := make([]float64, len(idx))
		for k, i := range idx {
			each[k] = r.Estimates[i].Estimate.TotalBytes()
		}
		total := SharedBytes(each...)
		me := &r.Estimates[idx[0]]
		if total <= float64(limit) || r.shortModules[me.Name] {
			continue
		}
		if r.shortModules == nil {
			r.shortModules = map[string]bool{}
		}
		r.shortModules[me.Name] = true
		lm := &r.Layout.Modules[me.Index]
		e := &me.Estimate
		if len(idx) == 1 {
			stage := "first"
			if lm.Split.Uneven() || model.OffFirstStage(e.Terms) {
				stage = "busiest" // an uneven split's, or the last holding deferred gradients
			}
			r.Diags.Add(RuleGPUMemoryShort, lm.Pos("model"), me.Name, fits(lm, me, limit),
				"needs %s per GPU on its %s pipeline stage (weights and optimizer %s, activations %s, CUDA context, NCCL and allocator %s), more than %s",
				GiB(total), stage, GiB(e.WeightAndOptimizerBytes()), GiB(e.ActivationBytes()), GiB(e.OverheadBytes()), what)
			continue
		}
		// The largest module is the one to change; the others keep theirs.
		big := idx[0]
		var parts []string
		for _, i := range idx {
			o := &r.Estimates[i]
			parts = append(parts, fmt.Sprintf("%s %s", o.Name, GiB(o.Estimate.TotalBytes())))
			if o.Estimate.TotalBytes() > r.Estimates[big].Estimate.TotalBytes() {
				big = i
			}
		}
		b := &r.Estimates[big]
		rest := total - b.Estimate.TotalBytes()
		hint := "the modules share their GPUs; for " + b.Name + ": " + fits(&r.Layout.Modules[b.Index], b, limit-int64(rest))
		r.Diags.Add(RuleGPUMemoryShort, lm.Pos("model"), me.Name, hint,
			"colocated modules share these GPUs and together need %s per GPU (%s, one CUDA context), more than %s",
			GiB(total), strings.Join(parts, ", "), what)
	}
}

// fits says what would bring a module under limit: more tp or pp on the
// same ranks, the distributed optimizer, recompute.
func fits(lm *layout.Module, me *ModuleEstimate, limit int64) string {
	cfg := lm.Model.Config
	var ok []string
	try := func(what string, p model.Parallel, t model.Training) {
		if len(model.Check(cfg, p, t)) > 0 {
			return
		}
		dense := p.TP * p.GTPRemat * p.CP * p.PP
		if p.NumRanks%dense != 0 {
			return
		}
		p.DP = p.NumRanks / dense
		if p.NumRanks%(p.ExptTP*p.EP*p.ExptGTPRemat*p.PP) != 0 {
			return
		}
		e := model.Total(cfg, p, t)
		if tot := e.TotalBytes(); tot <= float64(limit) {
			ok = append(ok, fmt.Sprintf("%s (%s)", what, GiB(tot)))
		}
	}
	p, t := me.Parallel, me.Training
	for _, f := range []int{2, 4, 8} {
		q := p
		q.TP *= f
		try(fmt.Sprintf("tp %d", q.TP), q, t)
		q = p
		q.PP *= f
		try(fmt.Sprintf("pp %d", q.PP), q, t)
		if len(ok) > 0 {
			break
		}
	}
	if !t.UseDistributedOptimizer {
		u := t
		u.UseDistributedOptimizer = true
		try("training.use_distributed_optimizer: true", p, u)
	}
	for _, g := range []string{model.RecomputeSelective, model.RecomputeFull} {
		if t.RecomputeGranularity != g {
			u := t
			u.RecomputeGranularity = g
			try("training.recompute_granularity: "+g, p, u)
		}
	}
	if len(ok) == 0 {
		return "no single change of tp, pp, the distributed optimizer or recompute fits it: use more ranks, a shorter seq_length or a smaller micro-batch (mimoplan estimate shows the figures)"
	}
	return "fits with " + strings.Join(ok, ", or ")
}

// GiB formats bytes as GiB with two decimals.
func GiB(b float64) string { return fmt.Sprintf("%.2f GiB", b/(1<<30)) }
