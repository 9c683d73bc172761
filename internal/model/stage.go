package model

import (
	"fmt"
	"strings"
)

// Term names of the busiest pipeline stage of an uneven split.
const (
	TermStageWeights     = "pipeline_stage_weights"
	TermStageActivations = "pipeline_stage_activations"
)

// stageParams are one rank's parameters per layer kind (tensor-parallel
// shards, replicated, expert shards), and what sits on the first stage
// (the embedding) and the last (final norm, output layer, MTP layers).
type stageParams struct {
	tpDense, tpMoE, replDense, replMoE, expertMoE float64
	embedding, finalNorm                          float64
	tpMTP, replMTP, expertMTP                     float64
}

// busiestStage adds, for an uneven pipeline split, the difference between
// the busiest stage and Megatron's first-stage figure, which assumes every
// stage holds num_layers/pp layers. A stage r of pp, holding n_r
// transformer layers (get_num_layers_to_build's, StageLayers), keeps
//   - weights: its layers' parameters, the embedding on the first stage,
//     the final norm, the output layer (untied, or the tied copy when
//     pp > 1) and the MTP layers on the last; mimoplan's weight figure
//     (with every weight term) scaled by its bytes against the first
//     stage's in Megatron's formula;
//   - activations: those of pp - r micro-batches in flight under 1F1B,
//     n_r*(pp-r) layers' worth where the formula counts num_layers
//     (n_0*pp for an even split); mimoplan's activation figure scaled by
//     that ratio (the formula's interleaving penalty kept as it is).
//
// The busiest stage is the one with the largest sum.
func busiestStage(e *Estimate, c *Config, p *Parallel, t *Training, w weights) {
	if !p.Split.Uneven() || c.NumLayers == 0 {
		return
	}
	errs, chunks := checkSplit(c.NumLayers, c.MTPNumLayers, *p)
	if len(errs) > 0 || len(chunks) != p.PP {
		return
	}
	pattern := c.moePattern()
	if c.NumExperts == 0 {
		pattern = nil
	}
	// Layer ids run over virtual stages first, then ranks
	// (PipelineParallelLayerLayout.get_layer_offset).
	dense, moe := make([]int, p.PP), make([]int, p.PP)
	id := 0
	for v := range chunks[0] {
		for r := range chunks {
			for range chunks[r][v] {
				if id < len(pattern) && pattern[id] == 1 {
					moe[r]++
				} else {
					dense[r]++
				}
				id++
			}
		}
	}
	bd := bytesPerParameter(t.UseDistributedOptimizer, p.DP)
	be := bytesPerParameter(t.UseDistributedOptimizer, w.expertDP)
	first := (w.tpSharded+w.replicated)*bd + w.expertSharded*be
	wb, ab := e.WeightAndOptimizerBytes(), e.ActivationBytes()
	s := w.stage
	best, bestW, bestA := -1, 0.0, 0.0
	for r := range chunks {
		tp := s.tpDense*float64(dense[r]) + s.tpMoE*float64(moe[r])
		repl := s.replDense*float64(dense[r]) + s.replMoE*float64(moe[r])
		exp := s.expertMoE * float64(moe[r])
		if r == 0 {
			tp += s.embedding
		}
		if r == p.PP-1 {
			if c.VocabSize > 0 && (c.UntieEmbeddingsAndOutputWeights || p.PP > 1) {
				tp += s.embedding
			}
			tp += s.tpMTP
			repl += s.finalNorm + s.replMTP
			exp += s.expertMTP
		}
		wr, ar := wb, ab
		if first > 0 {
			wr = wb * ((tp+repl)*bd + exp*be) / first
		}
		ar = ab * float64((dense[r]+moe[r])*(p.PP-r)) / float64(c.NumLayers)
		if best < 0 || wr+ar > bestW+bestA {
			best, bestW, bestA = r, wr, ar
		}
	}
	what := []string{fmt.Sprintf("%d layers", dense[best]+moe[best])}
	if best == 0 {
		what = append(what, "the embedding")
	}
	if best == p.PP-1 {
		what = append(what, "the output layer")
	}
	why := fmt.Sprintf("the uneven pipeline split's busiest stage is %d of %d (%s, %d micro-batches in flight); Megatron's formula assumes %s layers on every stage",
		best, p.PP, strings.Join(what, ", "), p.PP-best, trimFloat(float64(c.NumLayers)/float64(p.PP)))
	if d := bestW - wb; d != 0 {
		e.Add(Term{Name: TermStageWeights, Part: PartWeights, Bytes: d, Why: why})
	}
	if d := bestA - ab; d != 0 {
		e.Add(Term{Name: TermStageActivations, Part: PartActivations, Bytes: d, Why: why})
	}
}

func trimFloat(x float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".")
}
