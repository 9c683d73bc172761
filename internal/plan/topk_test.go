package plan

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// The top K of the bounded search (lbFull, best-first placements) are
// exactly the first K of --all, in order, once --all keeps one candidate
// of those that differ only in the expert sizes of expert-free modules
// (its first): the bounds never drop a candidate that belongs there.
func TestTopKEqualsHeadOfAll(t *testing.T) {
	type tcase struct {
		name, spec string
		gtp        bool
		est        Estimator
		mem        float64
		slow       bool // over a second of CPU: go test -short leaves it
	}
	var cases []tcase
	for _, tc := range bruteCases {
		c := tcase{name: tc.name, spec: tc.spec, est: tc.est, mem: tc.mem, gtp: tc.gtp, slow: tc.slow}
		if tc.model {
			c.est = Model{}
		}
		cases = append(cases, c)
	}
	cases = append(cases,
		tcase{name: "three modules with models, 16 GPUs, 2 nodes", est: Model{},
			spec: "version: 1\ncluster: {nodes: 2, gpus_per_node: 8, gpu_memory: 80GiB}\nbatch: {micro_batch_size: 1, global_batch_size: 64}\n" +
				"modules:\n  - {name: vision, model: " + smallViT + "}\n  - {name: audio, model: " + smallViT + "}\n  - {name: language, model: " + smallLM + "}\n"},
		// Four nodes, and a language module of 5 layers whose sizes are few
		// (pp divides 5, dp the global batch): the band's walk steps over
		// them (bandSets, tilesIn), and ties on step are many (46,218 valid
		// layouts).
		tcase{name: "three modules with models, 32 GPUs, 4 nodes, few language sizes", est: Model{}, slow: true,
			spec: "version: 1\ncluster: {nodes: 4, gpus_per_node: 8, gpu_memory: 80GiB}\nbatch: {micro_batch_size: 1, global_batch_size: 64}\n" +
				"modules:\n  - {name: vision, model: " + smallViT + "}\n  - {name: audio, model: " + smallViT + "}\n" +
				"  - {name: language, model: {num_layers: 5, hidden_size: 256, num_attention_heads: 4, num_query_groups: 2, seq_length: 256, vocab_size: 1000}}\n"},
		// A split that lightens the last stage: the bounds take the
		// lightest last stage any split gives (boundSplit).
		tcase{name: "a split counting the loss, 15 GPUs, 3 nodes", est: Model{},
			spec: "version: 1\ncluster: {nodes: 3, gpus_per_node: 5, gpu_memory: 80GiB}\nbatch: {micro_batch_size: 1, global_batch_size: 60}\n" +
				"modules:\n  - name: language\n    account_for_loss_in_pipeline_split: true\n" +
				"    model: {num_layers: 14, hidden_size: 256, num_attention_heads: 4, seq_length: 256, vocab_size: 8000}\n"},
		tcase{name: "MoE with an encoder, 8 GPUs", est: toyEstimator{weights: 8e9}, mem: 6e9,
			spec: "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nbatch: {micro_batch_size: 1, global_batch_size: 32}\nmodules:\n" +
				"  - name: vision\n  - name: language\n    num_experts: 4\n"})
	// Each case under the analytic and the calibrated step-time model: the
	// bounds are exact for any model that passes steptimetest.
	// The calibrated model also with a headroom kept (--headroom), whose
	// refusals of the language module's sizes the search learns.
	models := []struct {
		sel    steptime.Select
		margin float64
	}{{steptime.Select{Analytic: true, HW: steptime.GPUs["H100"]}, 0}, {steptime.Select{Dev: steptime.Devices["H100"]}, 0}, {steptime.Select{Dev: steptime.Devices["H100"]}, 0.1}}
	for _, tc := range cases {
		for _, mc := range models {
			sel := mc.sel
			t.Run(fmt.Sprintf("%s/analytic=%v/margin=%g", tc.name, sel.Analytic, mc.margin), func(t *testing.T) {
				if testing.Short() && tc.slow {
					t.Skip("over a second of CPU: make test runs it")
				}
				spec, d := layout.ParseSpec("s.yaml", []byte(tc.spec))
				require.False(t, d.HasErrors(), "%v", d.Items)
				req := &Request{Spec: spec, Options: Options{GTP: tc.gtp}, Est: tc.est, HW: sel.HW, Time: sel.For(spec), GPUMemory: tc.mem}
				if tc.mem == 0 {
					req.GPUMemory = float64(spec.GPUMemory)
				}
				req.Margin = mc.margin * req.GPUMemory
				all, err := Search(req)
				require.NoError(t, err)
				all.Candidates = foldExperts(spec, req.Est, all.Candidates)
				for _, k := range []int{1, 2, 5, 20} {
					req.Top = k
					top, err := Search(req)
					require.NoError(t, err)
					require.Len(t, top.Candidates, min(k, len(all.Candidates)))
					for j := range top.Candidates {
						a, b := &all.Candidates[j], &top.Candidates[j]
						require.Equal(t, key(a.Modules), key(b.Modules), fmt.Sprintf("top %d, #%d", k, j))
						require.Equal(t, a.Score, b.Score, fmt.Sprintf("top %d, #%d", k, j))
					}
				}
			})
		}
	}
}

// foldExperts keeps the first of the candidates that differ only in the
// expert sizes of expert-free modules.
func foldExperts(spec *layout.Layout, est Estimator, cs []Candidate) []Candidate {
	seen := map[string]bool{}
	var out []Candidate
	for _, c := range cs {
		base := slices.Clone(c.Modules)
		for i := range base {
			if est.ExpertFree(spec, &spec.Modules[i]) {
				base[i].ExptTP, base[i].ExptGTPRemat = 0, 0
			}
		}
		if k := key(base); !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	return out
}
