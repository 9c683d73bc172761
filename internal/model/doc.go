// Package model is the arithmetic of one module's model: parameters,
// memory per GPU and FLOPs per sample, exactly as Megatron-LM computes them
// (megatron/training/theoretical_memory_usage.py and
// num_floating_point_operations in megatron/training/training.py, at the
// commit named in testdata/megatron.json), plus mimoplan's named
// adjustments for what those formulas ignore. It does no I/O.
//
// Use:
//
//	e := model.Compute(cfg, par, tr) // cfg Config, par Parallel, tr Training
//	e.Megatron.WeightAndOptimizerBytes // Megatron's own figures, untouched
//	e.Megatron.ActivationBytes
//	e.Megatron.FLOPsPerSample
//	e.TotalBytes()                     // mimoplan's figure: Megatron's + e.Terms
//	e.Add(model.Term{Name: "cuda_context", Part: model.PartOverhead, Bytes: b})
//
// Config fields are Megatron-LM's argument destinations; zero means "not
// given" and Compute fills Megatron's defaults (Config.Resolve). Parallel is
// the module as the job: NumRanks is world_size, DP data_parallel_size.
// Training.NumMicrobatches is global batch / (micro batch * dp), or 0 when
// unknown (Megatron's report then assumes pp microbatches in flight).
//
// The estimate is for the most loaded rank, the first pipeline stage, as
// Megatron's report is. Megatron's figures are kept in Estimate.Megatron;
// mimoplan's differ only by Terms (context parallelism, full recompute,
// gtp_remat, the distributed optimizer over dp x cp, an encoder without an
// output layer), each named and explained, so both stay reachable and a
// caller (for example a measured overhead) adds its own Term.
//
// Cheap bounds for a planner: Estimate costs a few hundred floating-point
// operations, so a planner can call Compute on every candidate; PaddedVocabSize
// and Formula are exported for callers that need the pieces.
package model
