package model

// Part says which figure a Term adds to.
type Part string

const (
	PartWeights     Part = "weights"     // weight and optimizer bytes
	PartActivations Part = "activations" // activation bytes
	PartOverhead    Part = "overhead"    // neither: CUDA context, NCCL buffers, fragmentation
)

// Term is one named addition to Megatron's figures (negative when mimoplan
// knows the rank holds less). Terms are how mimoplan's figure differs from
// Megatron's; anything measured later is one more Term.
type Term struct {
	Name  string  `json:"name"`
	Part  Part    `json:"part"`
	Bytes float64 `json:"bytes"`
	Why   string  `json:"why"`
}

// Megatron holds the figures exactly as megatron/training/
// theoretical_memory_usage.py and training.py compute them for the same
// arguments.
type Megatron struct {
	// Parameters and ActiveParameters are num_total_parameters and
	// num_active_parameters of compute_weight_and_optimizer_memory.
	Parameters       float64 `json:"parameters"`
	ActiveParameters float64 `json:"active_parameters"`
	// ShardParameters is num_parameters_on_most_loaded_model_shard.
	ShardParameters         float64 `json:"shard_parameters"`
	WeightAndOptimizerBytes float64 `json:"weight_and_optimizer_bytes"`
	// ActivationBytes comes from ActivationFormula (see Formula).
	ActivationBytes   float64 `json:"activation_bytes"`
	ActivationFormula string  `json:"activation_formula"`
	// FLOPsPerSample is num_floating_point_operations(args, batch_size=1).
	FLOPsPerSample  float64 `json:"flops_per_sample"`
	PaddedVocabSize int     `json:"padded_vocab_size"`
}

// TotalBytes is what report_theoretical_memory prints as total.
func (m Megatron) TotalBytes() float64 { return m.WeightAndOptimizerBytes + m.ActivationBytes }

// Estimate is one module's memory on its most loaded rank (the first
// pipeline stage) and its FLOPs per sample: Megatron's figures, and
// mimoplan's, which are Megatron's plus Terms.
type Estimate struct {
	Megatron Megatron
	Terms    []Term
}

// Add appends a term (for callers that know more, such as measured
// overheads).
func (e *Estimate) Add(t Term) { e.Terms = append(e.Terms, t) }

func (e *Estimate) sum(p Part) float64 {
	var s float64
	for _, t := range e.Terms {
		if t.Part == p {
			s += t.Bytes
		}
	}
	return s
}

// WeightAndOptimizerBytes is mimoplan's figure: Megatron's plus weight terms.
func (e *Estimate) WeightAndOptimizerBytes() float64 {
	return e.Megatron.WeightAndOptimizerBytes + e.sum(PartWeights)
}

// ActivationBytes is mimoplan's figure: Megatron's plus activation terms.
func (e *Estimate) ActivationBytes() float64 {
	return e.Megatron.ActivationBytes + e.sum(PartActivations)
}

// OverheadBytes is the sum of overhead terms.
func (e *Estimate) OverheadBytes() float64 { return e.sum(PartOverhead) }

// OffFirstStage reports whether an estimate of these terms is another
// pipeline stage's than the first, Megatron's: an uneven split's busiest
// stage, or the last stage holding the loss's logits or deferred
// output-layer gradients.
func OffFirstStage(terms []Term) bool {
	for _, t := range terms {
		switch t.Name {
		case TermStageWeights, TermStageActivations, TermLastStageLogits, TermDeferredWgrad:
			return true
		}
	}
	return false
}

// TotalBytes is mimoplan's total per GPU.
func (e *Estimate) TotalBytes() float64 {
	return e.WeightAndOptimizerBytes() + e.ActivationBytes() + e.OverheadBytes()
}

// Compute returns the estimate of a model on parallel sizes with training
// options. It resolves defaults itself (Config.Resolve, Parallel.Resolve);
// callers check the model rules first (Check): on values Megatron would
// refuse the figures are meaningless but finite.
func Compute(cfg Config, par Parallel, tr Training) Estimate {
	c := cfg.Resolve()
	p := par.Resolve()
	t := tr.Resolve()
	vocab := PaddedVocabSize(c.VocabSize, c.MakeVocabSizeDivisibleBy, p.TP)
	w := weightMemory(&c, &p, &t, vocab)
	formula := Formula(&t)
	a := actArgs{
		seq: c.SeqLength, mbs: t.MicroBatchSize, hidden: c.HiddenSize, ffn: c.FFNHiddenSize,
		layers: c.NumLayers, tp: p.TP, pp: p.PP, vpp: p.VPP, vocab: vocab,
		microbatches: t.NumMicrobatches,
	}
	e := Estimate{Megatron: Megatron{
		Parameters:              w.total,
		ActiveParameters:        w.active,
		ShardParameters:         w.onMostLoaded,
		WeightAndOptimizerBytes: w.bytes,
		ActivationBytes:         activation(formula, a),
		ActivationFormula:       formula,
		FLOPsPerSample:          flopsPerSample(&c, vocab),
		PaddedVocabSize:         vocab,
	}}
	adjust(&e, &c, &p, &t, w, formula, a)
	busiestStage(&e, &c, &p, &t, w)
	return e
}
