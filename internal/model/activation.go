package model

// Activation formulas of megatron/training/theoretical_memory_usage.py.
const (
	FormulaSP    = "compute_activation_memory"
	FormulaNoSP  = "compute_activation_memory_without_sp"
	overheadNoSP = 1.05 // compute_activation_memory_without_sp's 5% buffer
)

// Formula returns the activation function Megatron's report uses:
// compute_activation_memory when sequence parallelism and selective
// recompute are both on, else compute_activation_memory_without_sp.
func Formula(t *Training) string {
	if t.SequenceParallel && t.RecomputeGranularity == RecomputeSelective {
		return FormulaSP
	}
	return FormulaNoSP
}

// actArgs are the arguments the activation formulas read. mimoplan's
// adjusted figure is the same formula on adjusted arguments, so each
// adjustment is one named difference.
type actArgs struct {
	seq, mbs, hidden, ffn, layers, tp, pp, vpp, vocab int
	microbatches                                      int // 0: None
	// perLayer, when set, replaces the formula's per-layer bytes (the
	// stack's layer, layerShape; full recompute's checkpoints).
	perLayer func(seq, mbs int) float64
	// noOutput drops the output layer and loss (an encoder has none).
	noOutput bool
}

// activationSP is compute_activation_memory (Korthikanti et al., table 2),
// operation for operation.
func activationSP(a actArgs) float64 {
	sbh := prod(a.seq, a.mbs, a.hidden)
	var m float64
	if a.perLayer != nil {
		m = a.perLayer(a.seq, a.mbs)
	} else {
		m = sbh * (18 + 4*(float64(a.ffn)/float64(a.hidden)))
	}
	m *= float64(a.layers)
	m += prod(8, a.seq, a.mbs, a.pp)
	m += prod(a.seq, a.mbs, a.hidden, a.pp)
	m = pipelineFactor(m, a)
	if a.pp == 1 && !a.noOutput {
		m += prod(a.seq, a.mbs, a.hidden, 4) * (1 + float64(a.vocab)/float64(a.hidden))
	}
	return m / float64(a.tp)
}

// activationNoSP is compute_activation_memory_without_sp, operation for
// operation.
func activationNoSP(a actArgs) float64 {
	var m float64
	if a.perLayer != nil {
		m = a.perLayer(a.seq, a.mbs)
	} else {
		m = prod(a.seq, a.mbs, a.hidden) * (10 + 24/float64(a.tp))
	}
	m *= float64(a.layers)
	m += prod(8, a.seq, a.mbs, a.pp)
	m += prod(a.seq, a.mbs, a.hidden, a.pp)
	m = pipelineFactor(m, a)
	if a.pp == 1 && !a.noOutput {
		logits := prod(a.seq, a.mbs, a.vocab) / float64(a.tp)
		finalLN := prod(a.seq, a.mbs, a.hidden)
		m += (logits + finalLN) * 2
	}
	return m * overheadNoSP
}

// pipelineFactor applies the interleaved schedule's penalty, or the
// discount when fewer microbatches than stages are in flight.
func pipelineFactor(m float64, a actArgs) float64 {
	if a.vpp > 0 {
		pp := float64(a.pp)
		penalty := 1 + (pp-1)/(pp*float64(a.vpp))
		return m * penalty
	}
	if a.pp > 1 && a.microbatches > 0 {
		return m * min(1, float64(a.microbatches)/float64(a.pp))
	}
	return m
}

func activation(formula string, a actArgs) float64 {
	if formula == FormulaSP {
		return activationSP(a)
	}
	return activationNoSP(a)
}
