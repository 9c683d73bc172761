package model

import "fmt"

// Term names of mimoplan's adjustments (docs/estimate.md explains each).
const (
	TermNoOutputLayer   = "no_output_layer"
	TermFullRecompute   = "full_recompute"
	TermContextSplit    = "context_parallel"
	TermOptimizerOverCP = "optimizer_over_cp"
	TermGTPRemat        = "gtp_remat"
	TermExpertGTPRemat  = "expt_gtp_remat"
)

// adjust adds the terms for what Megatron's formula ignores but the layout
// decides. Activation terms are differences of the same formula on
// adjusted arguments, applied one after another.
func adjust(e *Estimate, c *Config, p *Parallel, t *Training, w weights, formula string, a actArgs) {
	prev := e.Megatron.ActivationBytes
	step := func(name, why string, b actArgs) {
		v := activation(formula, b)
		if d := v - prev; d != 0 {
			e.Add(Term{Name: name, Part: PartActivations, Bytes: d, Why: why})
		}
		prev = v
	}
	if c.VocabSize == 0 && p.PP == 1 {
		a.noOutput = true
		step(TermNoOutputLayer, "an encoder has no output layer or loss, which the formula counts on the last stage", a)
	}
	if t.RecomputeGranularity == RecomputeFull {
		sp, tp := t.SequenceParallel, p.TP
		a.perLayer = func(seq, mbs, hidden int) float64 {
			in := 2 * prod(seq, mbs, hidden) // each layer keeps its bf16 input
			if sp && formula == FormulaNoSP {
				in /= float64(tp)
			}
			return in
		}
		step(TermFullRecompute, "full recompute keeps only each layer's input; the formula counts every activation", a)
	}
	if p.CP > 1 {
		a.seq = c.SeqLength / p.CP
		step(TermContextSplit, fmt.Sprintf("context parallelism splits each sequence over %d ranks; the formula ignores cp", p.CP), a)
	}

	dist := t.UseDistributedOptimizer
	if dist && p.CP > 1 {
		d := (w.tpSharded + w.replicated) * (bytesPerParameter(true, p.DP*p.CP) - bytesPerParameter(true, p.DP))
		e.Add(Term{Name: TermOptimizerOverCP, Part: PartWeights, Bytes: d,
			Why: fmt.Sprintf("the distributed optimizer shards over dp x cp = %d ranks, not dp = %d", p.DP*p.CP, p.DP)})
	}
	if g := p.GTPRemat; g > 1 {
		held := w.tpSharded * bytesPerParameter(dist, p.DP*p.CP)
		d := held*(1/float64(g)-1) + 2*w.tpShardedLayer
		e.Add(Term{Name: TermGTPRemat, Part: PartWeights, Bytes: d,
			Why: fmt.Sprintf("gtp_remat %d keeps 1/%d of each tensor-parallel weight and gathers one layer's bf16 weights at a time", g, g)})
	}
	if g := p.ExptGTPRemat; g > 1 && w.expertSharded > 0 {
		held := w.expertSharded * bytesPerParameter(dist, w.expertDP)
		e.Add(Term{Name: TermExpertGTPRemat, Part: PartWeights, Bytes: held * (1/float64(g) - 1),
			Why: fmt.Sprintf("expt_gtp_remat %d keeps 1/%d of each expert weight", g, g)})
	}
}
