package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// TestSuggestRespectsInterleavedMicrobatches: in the brute-force case of
// interleaved micro-batches, the space holds layouts that
// interleaved-microbatches-not-divisible alone refuses, and suggest
// proposes none of them, while it still proposes interleaved layouts
// whose micro-batches suit their pp (a planner that ignored the rule
// would keep the former; one that dropped interleaving, neither).
func TestSuggestRespectsInterleavedMicrobatches(t *testing.T) {
	suggestRespects(t, "model, 4 GPUs, tp pp vpp open, interleaved micro-batches", diag.RuleInterleavedMicrobatches,
		"interleaved layouts the rule accepts", func(c Choice) bool { return c.VPP > 1 })
}

// TestSuggestRespectsMIMOVPP: on target megatron-lm the space holds
// interleaved layouts that only mimo-vpp-unsupported refuses, and suggest
// proposes none of them, while it still proposes pipelines without
// interleaving.
func TestSuggestRespectsMIMOVPP(t *testing.T) {
	suggestRespects(t, "megatron-lm, model, 4 GPUs, tp pp vpp open", diag.RuleMIMOVPPUnsupported,
		"pipelines without interleaving", func(c Choice) bool { return c.PP > 1 && c.VPP <= 1 })
}

// suggestRespects runs suggest on the one-module brute-force case name
// and checks that it keeps some layout that kept describes, and none of
// the raw layouts that rule alone refuses (of which there are some).
func suggestRespects(t *testing.T, name string, rule diag.RuleID, what string, kept func(Choice) bool) {
	t.Helper()
	i := slices.IndexFunc(bruteCases, func(c bruteCase) bool { return c.name == name })
	require.GreaterOrEqual(t, i, 0)
	tc := bruteCases[i]
	spec, d := layout.ParseSpec("spec.yaml", []byte(tc.spec))
	require.Empty(t, d.Items)
	res, err := Search(&Request{Spec: spec, Est: Model{}, HW: steptime.GPUs["H100"], GPUMemory: float64(spec.GPUMemory)})
	require.NoError(t, err)
	got := map[string]bool{}
	n := 0
	for _, c := range res.Candidates {
		got[key(c.Modules)] = true
		if kept(c.Modules[0]) {
			n++
		}
	}
	require.Positive(t, n, "suggest keeps the %s", what)

	refused := 0
	for _, raw := range expand(Choice{Name: "language", NumRanks: 4, Sizes: Sizes{CP: 1, EP: 1, ExptTP: 1, GTPRemat: 1, ExptGTPRemat: 1}}, tc.open, &spec.Modules[0], 4) {
		l := *spec
		l.Modules = slices.Clone(spec.Modules)
		m := &l.Modules[0]
		m.RankOffset, m.NumRanks = 0, 4
		m.TP, m.PP, m.VPP = raw.TP, raw.PP, raw.VPP
		var r []string
		for _, x := range validate.Check(&l, &diag.List{File: "raw"}).Diags.Items {
			if x.Severity == diag.Error {
				r = append(r, x.Rule)
			}
		}
		if len(r) == 1 && r[0] == string(rule) {
			refused++
			require.False(t, got[key([]Choice{raw})], "suggest proposes %s, which %s refuses", key([]Choice{raw}), r[0])
		}
	}
	require.Positive(t, refused, "the case holds layouts only %s refuses", rule)
}

// TestSuggestRefusesMIMOSplit: on target megatron-lm a spec's
// pipeline_model_parallel_layout or account_for_*_in_pipeline_split (the
// spec gives them; suggest only sizes around them) leaves no layout, and
// the misses name mimo-split-unsupported; decoder_first/last stay open.
func TestSuggestRefusesMIMOSplit(t *testing.T) {
	const model = "{num_layers: 8, hidden_size: 256, num_attention_heads: 4, seq_length: 256, vocab_size: 1000}"
	for _, tc := range []struct {
		name, keys string
		refused    bool
	}{
		{"layout", `pipeline_model_parallel_layout: "Etttt|ttttL"`, true},
		{"account for loss", "account_for_loss_in_pipeline_split: true", true},
		{"account for embedding", "account_for_embedding_in_pipeline_split: true", true},
		{"first and last", "decoder_first_pipeline_num_layers: 3, decoder_last_pipeline_num_layers: 5", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "version: 1\ntarget: megatron-lm\ncluster: {nodes: 1, gpus_per_node: 4, gpu_memory: 80GiB}\nbatch: {micro_batch_size: 1, global_batch_size: 8}\n" +
				"training: {use_distributed_optimizer: true}\nmodules:\n  - {name: language, cp: 1, ep: 1, expt_tp: 1, " + tc.keys + ", model: " + model + "}\n"
			spec, d := layout.ParseSpec("spec.yaml", []byte(src))
			require.Empty(t, d.Items)
			res, err := Search(&Request{Spec: spec, Est: Model{}, HW: steptime.GPUs["H100"], GPUMemory: float64(spec.GPUMemory)})
			require.NoError(t, err)
			if !tc.refused {
				require.NotEmpty(t, res.Candidates)
				return
			}
			require.Empty(t, res.Candidates)
			require.NotEmpty(t, res.Misses)
			named := false
			for _, m := range res.Misses {
				for _, b := range m.Blocks {
					named = named || strings.Contains(b, string(diag.RuleMIMOSplitUnsupported))
				}
			}
			require.True(t, named, "the misses name the rule: %+v", res.Misses)
		})
	}
}
