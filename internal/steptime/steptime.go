// Package steptime estimates a module's time per global batch, the key
// suggest ranks layouts by (docs/suggest.md, "Ranking"). The search
// (internal/plan) reads a Model only through the interface below, and its
// bounds are exact only because every Model keeps the inequalities the
// interface states; steptimetest.TestModel checks them on random inputs.
package steptime

// Model is a step-time model: the time of one module of a layout, with its
// parts, and the lower bounds the search prunes with.
//
// The search drops a placement or a module's sizes only when a lower bound
// says that nothing in it can rank among the best K, so these must hold
// for every Shape s and every Module m, as computed in float64 (the search
// compares bounds with times exactly, ties included), with F = Fastest():
//
//  1. Pure: Time, Compute, LowerBound and OffsetClass depend on their
//     arguments alone; called twice they return the same values.
//  2. Parts: every part of Time is >= 0 and Total is their sum; the zero
//     Shape (a module without a model) costs zero.
//  3. Compute is a lower bound: Compute(s, m.Ranks) <= F.Time(s, m).Total
//     (and so <= Time(s, m).Total, by 4), for every sizes, offset,
//     micro-batch count and parameters.
//  4. Fastest is a lower bound: F.Time(s, m).Total <= Time(s, m).Total.
//  5. Fastest reads no offset: F.Time(s, m) is the same at every
//     m.Offset.
//  6. The offset is read through its class: Time(s, m) is the same for
//     two offsets with the same OffsetClass.
//  7. More micro-batches never cost more: Time(s, m).Total, and
//     F.Time(s, m).Total, do not grow with m.Microbatches.
//  8. Compute does not grow with the ranks: Compute(s, n+1) <= Compute(s, n).
//  9. LowerBound(s, m) <= F.Time(s, m').Total * (1 + 1e-9) for every m'
//     that differs from m only in Offset, Microbatches >= 1 and Params >= 0
//     (the search lists sizes by it before it knows their parameters; the
//     margin is the one it allows for rounding).
//  10. Without MoE layers (s.MoELayers == 0) Time reads no ExptTP: the
//     search visits an expert-free module's expert sizes last, once their
//     time is known.
//  11. A split only slows: Time(s, m) and LowerBound(s, m) with
//     Imbalance 0 and LastShort 1 are at most Time(s, m) and F.Time(s, m)
//     with any Imbalance >= 1 and LastShort <= 1 (the search bounds a
//     module with an uneven split so, before it knows the split's stages).
//
// Compute also decides where the search starts (the FLOPs' shares of the
// GPUs); a Model whose compute is not F/n-shaped makes it slower, never
// wrong.
type Model interface {
	// Time is module m's time per global batch on shape s.
	Time(s *Shape, m Module) Parts
	// Compute is the least time of a module of shape s on ranks GPUs:
	// its FLOPs spread evenly at the model's efficiency.
	Compute(s *Shape, ranks int) float64
	// LowerBound is a cheap lower bound of m's time whatever its offset,
	// micro-batches and parameters.
	LowerBound(s *Shape, m Module) float64
	// OffsetClass is what Time reads of a module's first rank.
	OffsetClass(offset int) int
	// Fastest is the model with every group at the faster of its
	// bandwidths: a lower bound of this one at every offset.
	Fastest() Model
}

// Shape is what a step-time model needs to know of a module's model; the
// zero Shape (no model) costs nothing.
type Shape struct {
	FLOPsPerSample float64 // training FLOPs of one sample (forward and backward)
	Layers         int     // transformer layers
	MoELayers      int     // of which MoE
	Hidden         int     // hidden size
	Seq            int     // tokens per sample
	KVDim          int     // key/value width: query groups * kv channels
	TopK           int     // experts per token
	// Dims is what the calibrated model reads beyond these (DimsOf); the
	// analytic model reads none of it.
	Dims Dims
}

// Module is one module of a candidate as a step-time model reads it: its
// span, its parallel sizes, its pipeline's micro-batches per global batch
// and the parameters on its most loaded GPU.
type Module struct {
	Offset, Ranks int
	TP, GTPRemat  int
	CP, PP, VPP   int // VPP 0 or 1: no interleaving
	DP            int
	EP, ExptTP    int
	Microbatches  int
	Params        float64
	// Imbalance is the busiest pipeline stage's layers over layers/pp
	// (an uneven split): the busiest stage sets the pipeline's pace. 0
	// or 1: an even split.
	Imbalance float64
	// LastShort is how many fewer layers than layers/pp the last stage
	// holds, over layers/pp (Stages): the stage of the output layer, which
	// an uneven split may lighten (account_for_loss_in_pipeline_split) or
	// load. 0: an even split. The search's bounds pass 1 for a module with
	// an uneven split (the lightest last stage any split gives), so that
	// they stay below its time.
	LastShort float64
}

// Parts is one module's share of the step, in seconds per global batch.
type Parts struct {
	Compute float64 `json:"compute_s" yaml:"compute_s"`
	Bubble  float64 `json:"bubble_s" yaml:"bubble_s"`
	TP      float64 `json:"tp_comm_s" yaml:"tp_comm_s"`
	CP      float64 `json:"cp_comm_s" yaml:"cp_comm_s"`
	EP      float64 `json:"ep_comm_s" yaml:"ep_comm_s"`
	PP      float64 `json:"pp_comm_s" yaml:"pp_comm_s"`
	DP      float64 `json:"dp_comm_s" yaml:"dp_comm_s"`
	Total   float64 `json:"total_s" yaml:"total_s"`
}
