// Package plan searches the layouts a suggest spec allows (docs/suggest.md):
// every placement of the modules on the cluster times every factorization
// of each module's ranks, pruned only by conditions every valid layout
// meets, each survivor checked by validate. It does no I/O.
//
// # Where things are
//
//	search.go     Request, Result, Search: the searcher's state
//	space.go      the candidate space: Sizes, Choice, factorizations (the
//	              descent's, and the bounds' from each lane's cores)
//	refusal.go    the model's refusals, by the sizes their rules read
//	placement.go  placements: colocated, then the tilings of the world
//	tiling.go     the one iterator over the tilings (both of the above),
//	              over every size or a band's sets of sizes
//	bestfirst.go  --top: tilings by increasing bound, in bands
//	descent.go    the descent (choose): each module's factorization in
//	              turn, by lbTime, or by exact time once one is kept
//	ranked.go     a module's factorizations by their exact time
//	bound.go      the lower bounds of a module's time (lbFull, lbAt)
//	candidate.go  a complete candidate: expert sizes, validate's verdict
//	colocated.go  the colocated placement's memory together and
//	              colocated-pp-cp-unsupported, decided before validate
//	nogood.go     what a refusal teaches (the nogood cache)
//	kept.go       the ranking (less), the top-K heap and the misses
//	score.go      a candidate's score and the step-time model's input
//	model.go      Model: the Estimator of internal/model
//	memo.go       the bounded memo every cache uses
//
// # Why the search is exact
//
// Search returns, under Top = 0 (--all), exactly the layouts of the space
// that validate accepts and that fit, and under Top = K the first K of
// those by less (one for each set of layouts that differ only in an
// expert-free module's expert sizes). TestSuggestAllEqualsBruteForce,
// TestSuggestAllEqualsBruteForce16 and TestTopKEqualsHeadOfAll check it. It
// rests on these invariants, which the code cites where it relies on them
// ("Invariant 3"). A search stopped at MaxNodes returns the best of what it
// visited, outside this argument.
//
//  1. The space holds every valid layout: the placements are the
//     colocated one and every tiling of the world (validate refuses the
//     rest: span-overlap, world-gap); the factorizations are every size
//     that meets ModuleGridSpec's divisibility (dense-not-divisible,
//     expert-not-divisible), the spec's fixed sizes and max_tp, with vpp
//     and ep by validate's own necessary conditions (validate.VPPValues,
//     validate.ExpertParallelOK).
//  2. What is dropped before validate, validate refuses: the model's
//     rules on the sizes alone (Estimator.Accepts), and, once a rule
//     refused some sizes, every factorization holding the sizes it
//     declares it reads (diag.Reads; refusal.go), a memory lower bound
//     above gpu_memory (gpu-memory-short), colocated modules' lower bounds
//     together above it (validate.SharedBytes; once a candidate is kept or
//     the misses are full, with validate's own estimate of each module
//     already chosen: colocatedBytes), colocated sizes
//     colocated-pp-cp-unsupported refuses whatever the later modules
//     (validate.ColocatedPPOK, ColocatedCPOK), and the nogoods of 3.
//  3. A nogood replays a verdict: a refusal is remembered only under the
//     inputs its rule declares it reads (diag.Reads) among those that vary
//     between candidates (validate's TestRuleReadsItsDeclaredInputs holds
//     each rule to its declaration); an encoder none of whose
//     factorizations survives beside the language module's lanes is
//     refused beside those lanes.
//  4. Every candidate returned passed validate: the layout is built and
//     checked by validate.CheckWith, whose errors drop it.
//  5. The bounds are lower bounds: a module's compute <= lbFull <= lbAt
//     <= its time in any candidate of the placement, from the step-time
//     model's own inequalities (steptime.Model, checked by
//     steptimetest.TestModel), so a placement's largest and summed lbAt
//     are at most every candidate's step and sum, and a band's cheap
//     bound (lbFull, lbAt for the module that sets it), summed in the
//     same order, at most those.
//  6. Pruning by score is strict: a placement or a factorization is
//     dropped only when its bounds put every candidate in it after the
//     K-th kept by less's first two keys (beyond); ties on both are
//     decided by sizes before validate runs. A band's placements are
//     taken by (bound, sum), cheap or exact, whose values taken never
//     decrease (an exact pair is at least the cheap one it replaces), so
//     the first past the K-th kept ends the band.
//  7. Bounds never fall: a refusal only removes factorizations, and a
//     known lbFull is recomputed at once (a known lbAt is then asked
//     again), so a placement bestFirst finds by a cheap bound waits for
//     the band its exact bound falls in and is never lost.
//  8. Lists are ordered by a lower bound of what is compared: a module's
//     factorizations by lbTime (by their exact time once a candidate is
//     kept), so the first one past the threshold ends the loop.
//  9. An expert-free module's expert sizes change nothing the ranking
//     reads (Estimator.ExpertFree, TestExpertFree): they are visited last,
//     for each candidate, and with Top the first one validate accepts
//     stands for them; what their first sizes teach holds for the others,
//     since a rule that reads a dense module's expert sizes teaches
//     nothing about it (3).
//  10. The misses shown when nothing fits are those of the search that
//     judges every candidate it reaches: while nothing fits, validate is
//     spared a candidate it would refuse (the colocated modules' memory
//     by validate's estimates; the other expert sizes of a candidate
//     refused by gpu-memory-short alone, memoryRefusesRest) only when
//     the miss it makes would be dropped (missDropped).
//     TestShortcutsKeepResult compares the two searches.
//  11. The order is total (less: step, sum, then sizes), so the top K are
//     well defined, and the kept heap holds the K least.
package plan
