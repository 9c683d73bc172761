package validate_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// at is the part of a diagnostic the rule tests pin down.
type at struct {
	Rule         string
	Line, Column int
	Module       string
}

func run(src string) *validate.Result {
	l, d := layout.Parse("rules.yaml", []byte(src))
	return validate.Check(l, d)
}

func ats(r *validate.Result) []at {
	var out []at
	for _, d := range r.Diags.Items {
		out = append(out, at{d.Rule, d.Line, d.Column, d.Module})
	}
	return out
}

// ruleCase is one layout and every diagnostic it must produce: a layout
// that breaks a rule lists it, one that passes lists nothing.
type ruleCase struct {
	name string
	src  string
	want []at
}

// fanIn is the warning for an encoder whose dp exceeds the language
// module's data lanes, at the encoder's num_ranks.
func fanIn(line, column int, module string) at {
	return at{"fan-in-uneven-tokens", line, column, module}
}

func runRuleCases(t *testing.T, tests []ruleCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(tt.src)
			require.NotNil(t, r.Topology, "the core rules must pass: %+v", r.Diags.Items)
			assert.Equal(t, tt.want, ats(r))
			for _, d := range r.Diags.Items {
				_, ok := diag.Lookup(d.Rule)
				assert.True(t, ok, "rule %q is in the catalogue", d.Rule)
				assert.NotEmpty(t, d.Message)
				assert.NotEmpty(t, d.Hint, "every diagnostic says how to fix it: %s", d.Rule)
			}
		})
	}
}

func TestCommunicatorRules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"bridge leaders not divisible", "version: 1\nworld_size: 10\nmodules:\n- {name: vision, num_ranks: 6, tp: 2}\n- {name: language, num_ranks: 4, tp: 2}\n",
			[]at{{"bridge-leaders-not-divisible", 4, 29, "vision"}}},
		{"bridge leaders divisible", "version: 1\nworld_size: 12\nmodules:\n- {name: vision, num_ranks: 8, tp: 2}\n- {name: language, num_ranks: 4, tp: 2}\n",
			[]at{fanIn(4, 29, "vision")}},
		// dp 6 and dp 4 do not divide one another, but language has 4*3 =
		// 12 lanes, a multiple of vision's 6.
		{"bridge leaders count gtp_remat lanes", "version: 1\nworld_size: 18\nmodules:\n- {name: vision, num_ranks: 6}\n- {name: language, num_ranks: 12, gtp_remat: 3}\n", nil},
		// vision: 4 lanes; language: dp 1 x gtp_remat 4 = 4 lanes.
		{"bridge leaders equal through gtp_remat", "version: 1\nworld_size: 12\nmodules:\n- {name: vision, dp: 4}\n- {name: language, num_ranks: 8, gtp_remat: 4, tp: 2}\n", nil},
		{"bridge leaders broken by gtp_remat", "version: 1\nworld_size: 10\nmodules:\n- {name: vision, dp: 4}\n- {name: language, num_ranks: 6, gtp_remat: 2}\n",
			// vision 4 lanes; language dp 3 x gtp_remat 2 = 6 lanes.
			[]at{{"bridge-leaders-not-divisible", 4, 22, "vision"}}},
		{"bridge cp on both ends before PR 5720", "version: 1\ntarget_version: 6570\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, cp: 2, tp: 2}\n- {name: language, num_ranks: 4, cp: 4}\n",
			[]at{{"bridge-cp-unsupported", 5, 36, "vision"}, {"bridge-cp-unsupported", 6, 38, "language"}}},
		{"bridge cp on the encoder only since PR 5720", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, cp: 2, tp: 2}\n- {name: language, num_ranks: 4, cp: 4}\n",
			[]at{{"bridge-cp-unsupported", 4, 36, "vision"}}},
		{"bridge cp 1 at 2026-08-22, before PR 5720", "version: 1\ntarget_version: 2026-08-22\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, cp: 2}\n",
			[]at{{"bridge-cp-unsupported", 6, 38, "language"}}},
		{"megatron-lm language cp stays an error after PR 5720, until PR 7435", "version: 1\ntarget: megatron-lm\ntarget_version: 6894\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, cp: 2}\ntraining: {use_distributed_optimizer: true}\n",
			[]at{{"bridge-cp-unsupported", 7, 38, "language"}}},
		{"megatron-lm language cp since PR 7435", "version: 1\ntarget: megatron-lm\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, cp: 2}\ntraining: {use_distributed_optimizer: true}\n", nil},
		{"bridge lanes count gtp_remat since PR 6263", "version: 1\nworld_size: 5\nmodules:\n- {name: vision, num_ranks: 3}\n- {name: language, num_ranks: 2, gtp_remat: 2}\n",
			[]at{{"bridge-leaders-not-divisible", 4, 29, "vision"}}},
		{"bridge leaders per dp replica before PR 6263", "version: 1\ntarget_version: 2026-08-03\nworld_size: 5\nmodules:\n- {name: vision, num_ranks: 3}\n- {name: language, num_ranks: 2, gtp_remat: 2}\n", nil},
		{"bridge leaders per dp replica before PR 6263, not divisible", "version: 1\ntarget_version: 5375\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 2}\n- {name: language, num_ranks: 6, gtp_remat: 2}\n",
			[]at{{"bridge-leaders-not-divisible", 5, 29, "vision"}}},
		{"bridge cp 1", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, tp: 2}\n", nil},
		{"language alone may use cp", "version: 1\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 8, cp: 4, pp: 2}\n", nil},
		{"colocated pp and cp", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 8, pp: 2}\n- {name: language, num_ranks: 8, rank_offset: 0, cp: 2, pp: 4}\n",
			[]at{{"colocated-pp-cp-unsupported", 4, 36, "vision"}, {"colocated-pp-cp-unsupported", 5, 54, "language"}, {"colocated-pp-cp-unsupported", 5, 61, "language"}}},
		{"colocated cp on the global groups: the encoder at cp 1 (Megatron-LM's MIMO functional test)", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 8}\n- {name: language, num_ranks: 8, rank_offset: 0, cp: 2}\n", nil},
		{"colocated cp on one grid", "version: 1\nworld_size: 16\nmodules:\n- {name: vision, num_ranks: 16, tp: 2, cp: 4}\n- {name: language, num_ranks: 16, rank_offset: 0, tp: 2, cp: 4}\n", nil},
		{"colocated cp, three modules on the global groups", "version: 1\nworld_size: 16\nmodules:\n- {name: vision, num_ranks: 16, cp: 4}\n- {name: audio, num_ranks: 16, rank_offset: 0}\n- {name: language, num_ranks: 16, rank_offset: 0, cp: 4}\n", nil},
		{"colocated cp on the global groups, a dense encoder beside an MoE language", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 8}\n- {name: language, num_ranks: 8, rank_offset: 0, cp: 2, ep: 4}\n", nil},
		{"colocated cp, an encoder with its own expert sizes", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 8, cp: 2, ep: 2}\n- {name: language, num_ranks: 8, rank_offset: 0, cp: 2, ep: 4}\n",
			[]at{{"colocated-pp-cp-unsupported", 4, 36, "vision"}, {"colocated-pp-cp-unsupported", 5, 54, "language"}}},
		{"colocated pp on one grid", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 8, pp: 2}\n- {name: language, num_ranks: 8, rank_offset: 0, pp: 2}\n",
			[]at{{"colocated-pp-cp-unsupported", 4, 36, "vision"}, {"colocated-pp-cp-unsupported", 5, 54, "language"}}},
		{"colocated cp, the encoder's tp differs", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 8, tp: 2}\n- {name: language, num_ranks: 8, rank_offset: 0, cp: 2}\n",
			[]at{{"colocated-pp-cp-unsupported", 5, 54, "language"}}},
		{"colocated cp, the encoder's cp neither 1 nor the language's", "version: 1\nworld_size: 16\nmodules:\n- {name: vision, num_ranks: 16, cp: 2}\n- {name: language, num_ranks: 16, rank_offset: 0, cp: 4}\n",
			[]at{{"colocated-pp-cp-unsupported", 4, 37, "vision"}, {"colocated-pp-cp-unsupported", 5, 55, "language"}}},
		{"colocated cp on the encoder alone", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 8, cp: 2}\n- {name: language, num_ranks: 8, rank_offset: 0}\n",
			[]at{{"colocated-pp-cp-unsupported", 4, 36, "vision"}}},
		{"colocated pp and cp 1", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 8, tp: 2}\n- {name: language, num_ranks: 8, rank_offset: 0, tp: 4}\n", nil},
		{"colocated dp not compatible", "version: 1\nworld_size: 12\nmodules:\n- {name: vision, num_ranks: 12, tp: 4}\n- {name: language, num_ranks: 12, rank_offset: 0, tp: 6}\n",
			[]at{{"dp-not-compatible", 4, 29, "vision"}}},
		{"colocated dp compatible", "version: 1\nworld_size: 12\nmodules:\n- {name: vision, num_ranks: 12, tp: 3}\n- {name: language, num_ranks: 12, rank_offset: 0, tp: 6}\n", nil},
	})
}

func TestBatchRules(t *testing.T) {
	const mods = "modules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, tp: 2}\n"
	runRuleCases(t, []ruleCase{
		{"fanout not divisible", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 1}\n" + mods,
			[]at{{"fanout-not-divisible", 3, 27, "vision"}, fanIn(5, 29, "vision")}},
		{"fanout divisible", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 2}\n" + mods, []at{fanIn(5, 29, "vision")}},
		{"fanout counts language gtp_remat", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 1}\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, gtp_remat: 2}\n", nil},
		{"global batch not a whole number of steps", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 2, global_batch_size: 6}\n" + mods,
			[]at{{"global-batch-not-divisible", 3, 49, ""}, fanIn(5, 29, "vision")}},
		{"global batch whole", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 2, global_batch_size: 8}\n" + mods, []at{fanIn(5, 29, "vision")}},
		{"megatron-lm global batch", "version: 1\ntarget: megatron-lm\nworld_size: 8\nbatch:\n  micro_batch_size: 2\n  global_batch_size: 10\ntraining: {use_distributed_optimizer: true}\n" + mods,
			[]at{{"global-batch-not-divisible", 6, 22, ""}, fanIn(9, 29, "vision")}},
		{"bridge micro-batch not divisible", "version: 1\ntarget: megatron-bridge\nworld_size: 8\nbatch: {micro_batch_size: 2, global_batch_size: 8}\n" + mods,
			[]at{{"micro-batch-not-divisible", 4, 27, "vision"}, fanIn(6, 29, "vision")}},
		{"bridge micro-batch divisible", "version: 1\ntarget: megatron-bridge\nworld_size: 8\nbatch: {micro_batch_size: 4, global_batch_size: 8}\n" + mods, []at{fanIn(6, 29, "vision")}},
		{"bridge global batch not divisible", "version: 1\ntarget: megatron-bridge\nworld_size: 8\nbatch: {micro_batch_size: 4, global_batch_size: 6}\n" + mods,
			[]at{{"global-batch-not-divisible", 4, 49, ""}, fanIn(6, 29, "vision")}},
		{"bridge global batch divisible", "version: 1\ntarget: megatron-bridge\nworld_size: 8\nbatch: {micro_batch_size: 4, global_batch_size: 12}\n" + mods, []at{fanIn(6, 29, "vision")}},
		// Megatron-Bridge asserts train.global_batch_size is set.
		{"bridge global batch required", "version: 1\ntarget: megatron-bridge\nworld_size: 8\nbatch: {micro_batch_size: 4}\n" + mods,
			[]at{{"global-batch-required", 4, 8, ""}, fanIn(6, 29, "vision")}},
		// Megatron-LM defaults global_batch_size to mbs*dp, which its eval
		// check then finds not divisible by mbs*dp*gtp_remat.
		{"megatron-lm gtp_remat without global batch", "version: 1\ntarget: megatron-lm\nworld_size: 8\nbatch: {micro_batch_size: 1}\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, gtp_remat: 2}\ntraining: {use_distributed_optimizer: true}\n",
			[]at{{"global-batch-default-not-divisible", 4, 8, ""}}},
		{"megatron-lm gtp_remat with global batch", "version: 1\ntarget: megatron-lm\nworld_size: 8\nbatch: {micro_batch_size: 1, global_batch_size: 8}\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, gtp_remat: 2}\ntraining: {use_distributed_optimizer: true}\n", nil},
		{"core gtp_remat without global batch", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 1}\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, gtp_remat: 2}\n", nil},
	})
}

func TestBatchFacts(t *testing.T) {
	r := run("version: 1\nworld_size: 8\nbatch: {micro_batch_size: 2, global_batch_size: 32}\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, tp: 1, gtp_remat: 2}\n")
	require.Empty(t, r.Diags.Items)
	assert.Equal(t, []string{
		"language has 4 data lanes (dp 2 x gtp_remat 2): a micro-batch step takes 8 samples (micro_batch_size 2 per lane)",
		"vision micro-batch: 2 samples per dp rank (8 / dp 4)",
		"4 micro-batches per global batch (32 / 8)",
	}, r.Diags.Notes)

	r = run("version: 1\ntarget: megatron-bridge\nworld_size: 8\nbatch: {micro_batch_size: 8, global_batch_size: 32}\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4}\n")
	require.Empty(t, r.Diags.Items)
	assert.Equal(t, []string{
		"global micro-batch 8: samples per dp rank: vision 4 (dp 2), language 2 (dp 4)",
		"num_microbatches 4 (global_batch_size 32 / micro_batch_size 8)",
	}, r.Diags.Notes)
}

// Facts stay a few lines however many modules there are.
func TestBatchFactsBounded(t *testing.T) {
	src := "version: 1\nworld_size: 21\nbatch: {micro_batch_size: 1, global_batch_size: 2}\nmodules:\n- {name: language, num_ranks: 1}\n"
	for i := range 20 {
		src += "- {name: e" + itoa(i) + ", num_ranks: 1}\n"
	}
	r := run(src)
	require.Empty(t, r.Diags.Items)
	assert.Len(t, r.Diags.Notes, 1+8+1+1)
	assert.Equal(t, "and 12 more encoders' micro-batches", r.Diags.Notes[9])

	r = run(strings.Replace(src, "version: 1\n", "version: 1\ntarget: megatron-bridge\n", 1))
	require.Empty(t, r.Diags.Items)
	require.Len(t, r.Diags.Notes, 2)
	assert.Equal(t, "global micro-batch 1: samples per dp rank: language 1 (dp 1), e0 1 (dp 1), e1 1 (dp 1), e2 1 (dp 1), e3 1 (dp 1), e4 1 (dp 1), e5 1 (dp 1), e6 1 (dp 1), and 13 more", r.Diags.Notes[0])
}

func TestMegatronLMRules(t *testing.T) {
	const head = "version: 1\ntarget: megatron-lm\nworld_size: 8\ntraining: {use_distributed_optimizer: true}\n"
	runRuleCases(t, []ruleCase{
		{"the nemotron example", head + "modules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, tp: 2, ep: 4, num_experts: 128}\n", nil},
		{"colocated unsupported", head + "modules:\n- {name: vision, num_ranks: 8, tp: 2}\n- {name: language, num_ranks: 8, rank_offset: 0, tp: 4}\n",
			[]at{{"colocated-unsupported", 7, 47, "language"}}},
		{"too many encoders", head + "modules:\n- {name: vision, num_ranks: 2}\n- {name: audio, num_ranks: 2}\n- {name: language, num_ranks: 4}\n",
			[]at{{"too-many-encoders", 7, 10, "audio"}}},
		{"encoder not first", head + "modules:\n- {name: language, num_ranks: 4}\n- {name: vision, num_ranks: 4}\n",
			[]at{{"encoder-not-first", 7, 3, "vision"}}},
		{"encoder not first, offset given", head + "modules:\n- {name: language, num_ranks: 4, rank_offset: 0}\n- {name: vision, num_ranks: 4, rank_offset: 4}\n",
			[]at{{"encoder-not-first", 7, 45, "vision"}}},
		{"cp unsupported", "version: 1\ntarget: megatron-lm\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 8, cp: 2}\ntraining: {use_distributed_optimizer: true}\n",
			[]at{{"cp-unsupported", 5, 38, "language"}}},
		{"cp 1 llm-only", "version: 1\ntarget: megatron-lm\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 8, pp: 2}\ntraining: {use_distributed_optimizer: true}\n", nil},
		// The bridge rule already names the cp of a non-colocated module
		// (before PR #7435).
		{"cp reported once", head + "target_version: 6894\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, cp: 2}\n",
			[]at{fanIn(7, 29, "vision"), {"bridge-cp-unsupported", 8, 38, "language"}}},
		// Since PR #7435 the language module may use cp beside an encoder;
		// the encoder keeps cp 1, and a language module alone too.
		{"language cp since PR 7435", head + "modules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, cp: 2}\n",
			[]at{fanIn(6, 29, "vision")}},
		{"encoder cp since PR 7435", head + "modules:\n- {name: vision, num_ranks: 4, cp: 2}\n- {name: language, num_ranks: 4}\n",
			[]at{{"bridge-cp-unsupported", 6, 36, "vision"}}},
		{"encoder parallelism", "version: 1\ntarget: megatron-lm\nworld_size: 12\nmodules:\n- {name: vision, num_ranks: 8, pp: 2, ep: 2, expt_tp: 2}\n- {name: language, num_ranks: 4}\ntraining: {use_distributed_optimizer: true}\n",
			[]at{{"encoder-parallelism-unsupported", 5, 36, "vision"}, {"encoder-parallelism-unsupported", 5, 43, "vision"}, {"encoder-parallelism-unsupported", 5, 55, "vision"}}},
		{"language may use pp and ep", head + "modules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, pp: 2, ep: 2}\n", []at{fanIn(6, 29, "vision")}},
		{"encoder gtp", "version: 1\ntarget: megatron-lm\nworld_size: 12\nmodules:\n- {name: vision, num_ranks: 8, gtp_remat: 2, expt_gtp_remat: 2}\n- {name: language, num_ranks: 4}\ntraining: {use_distributed_optimizer: true}\n",
			[]at{{"encoder-parallelism-unsupported", 5, 43, "vision"}, {"encoder-parallelism-unsupported", 5, 62, "vision"}}},
		{"language may use gtp", head + "modules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, gtp_remat: 2, expt_gtp_remat: 2}\n", nil},
		{"gtp since PR 6570", head + "target_version: 6570\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, gtp_remat: 2}\n", nil},
		{"gtp before PR 6570", head + "target_version: 2026-08-17\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, gtp_remat: 2, expt_gtp_remat: 2}\n",
			[]at{{"gtp-needs-newer-version", 8, 45, "language"}, {"gtp-needs-newer-version", 8, 64, "language"}}},
		{"before PR 5375", head + "target_version: 2026-06-22\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4}\n",
			[]at{{"target-version-too-old", 5, 17, ""}}},
		{"on the day of PR 5375", head + "target_version: 2026-06-23\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4}\n", nil},
		{"without the distributed optimizer", "version: 1\ntarget: megatron-lm\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4}\n",
			[]at{{"mimo-needs-distributed-optimizer", 2, 9, ""}}},
		{"distributed optimizer turned off", "version: 1\ntarget: megatron-lm\nworld_size: 8\ntraining: {use_distributed_optimizer: false}\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4}\n",
			[]at{{"mimo-needs-distributed-optimizer", 4, 39, ""}}},
		{"no distributed optimizer before PR 5602", "version: 1\ntarget: megatron-lm\ntarget_version: 2026-07-01\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4}\n", nil},
	})
}

func TestMegatronBridgeRules(t *testing.T) {
	const head = "version: 1\ntarget: megatron-bridge\nworld_size: 8\n"
	runRuleCases(t, []ruleCase{
		{"heterogeneous ok", head + "modules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, tp: 2, ep: 2}\n", nil},
		{"colocated unsupported", head + "modules:\n- {name: vision, num_ranks: 8, tp: 2}\n- {name: language, num_ranks: 8, rank_offset: 0, tp: 4}\n",
			[]at{{"colocated-unsupported", 6, 47, "language"}}},
		{"llm only ok", head + "modules:\n- {name: language, num_ranks: 8, tp: 2}\n", nil},
		{"encoder not dense", head + "modules:\n- {name: vision, num_ranks: 4, ep: 2, expt_tp: 2}\n- {name: language, num_ranks: 4}\n",
			[]at{{"encoder-not-dense", 5, 36, "vision"}, {"encoder-not-dense", 5, 48, "vision"}}},
		{"tp not a power of two", "version: 1\ntarget: megatron-bridge\nworld_size: 12\nmodules:\n- {name: vision, num_ranks: 6, tp: 3}\n- {name: language, num_ranks: 6, tp: 3}\n",
			[]at{{"tp-not-power-of-two", 5, 36, "vision"}, {"tp-not-power-of-two", 6, 38, "language"}}},
		{"dp not compatible between encoders", "version: 1\ntarget: megatron-bridge\nworld_size: 6\nmodules:\n- {name: vision, num_ranks: 2}\n- {name: audio, num_ranks: 3}\n- {name: language, num_ranks: 1}\n",
			[]at{fanIn(5, 29, "vision"), {"dp-not-compatible", 6, 28, "audio"}, fanIn(6, 28, "audio")}},
		// The encoder -> language pair is the bridge rule's to report.
		{"dp reported once", "version: 1\ntarget: megatron-bridge\nworld_size: 5\nmodules:\n- {name: vision, num_ranks: 3}\n- {name: language, num_ranks: 2}\n",
			[]at{{"bridge-leaders-not-divisible", 5, 29, "vision"}}},
		{"dp compatible", "version: 1\ntarget: megatron-bridge\nworld_size: 7\nmodules:\n- {name: vision, num_ranks: 2}\n- {name: audio, num_ranks: 4}\n- {name: language, num_ranks: 1}\n",
			[]at{fanIn(5, 29, "vision"), fanIn(6, 28, "audio")}},
		{"gtp unsupported", head + "modules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, gtp_remat: 2, expt_gtp_remat: 2}\n",
			[]at{{"gtp-unsupported", 6, 45, "language"}, {"gtp-unsupported", 6, 64, "language"}}},
		// Megatron-Bridge's versions (internal/upstream): before PR #2869
		// no MIMO training; from it until PR #4071 encoder dp >= language
		// dp; before PR #4485 no expert parallelism.
		{"before Bridge PR 2869", head + "target_version: 2026-04-09\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4}\n",
			[]at{{"target-version-too-old", 4, 17, ""}}},
		{"encoder dp below language dp before Bridge PR 4071", head + "target_version: 2026-05-01\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4}\n",
			[]at{{"bridge-encoder-dp-below-language-dp", 6, 29, "vision"}}},
		{"encoder dp below language dp, given as dp", head + "target_version: 2869\nmodules:\n- {name: vision, num_ranks: 2, dp: 2}\n- {name: audio, num_ranks: 2}\n- {name: language, num_ranks: 4}\n",
			[]at{{"bridge-encoder-dp-below-language-dp", 6, 36, "vision"}, {"bridge-encoder-dp-below-language-dp", 7, 28, "audio"}}},
		{"encoder dp above language dp before Bridge PR 4071", head + "target_version: 2869\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, tp: 2}\n", nil},
		{"encoder dp below language dp since Bridge PR 4071", head + "target_version: 4071\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4}\n", nil},
		{"expert parallelism before Bridge PR 4485", head + "target_version: 2026-07-12\nmodules:\n- {name: vision, num_ranks: 4, ep: 2}\n- {name: language, num_ranks: 4, ep: 2, expt_tp: 2}\n",
			[]at{{"bridge-expert-needs-newer-version", 6, 36, "vision"}, {"bridge-expert-needs-newer-version", 7, 38, "language"}, {"bridge-expert-needs-newer-version", 7, 50, "language"}}},
		{"expert parallelism since Bridge PR 4485", head + "target_version: 4485\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, ep: 2, expt_tp: 2}\n", nil},
	})
}

func TestLocality(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"tp larger than a node", "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nmodules:\n- {name: language, num_ranks: 8, tp: 8}\n",
			[]at{{"group-crosses-node", 4, 38, "language"}}},
		{"no cluster, no locality", "version: 1\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 8, tp: 8}\n", nil},
		{"misaligned module", "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nmodules:\n- {name: vision, num_ranks: 2, tp: 2}\n- {name: language, num_ranks: 6, tp: 2}\n",
			nil},
		{"misaligned tp", "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nmodules:\n- {name: vision, num_ranks: 2, tp: 2}\n- {name: language, num_ranks: 6, tp: 3}\n",
			[]at{{"group-crosses-node", 5, 38, "language"}}},
		{"cp strides over nodes", "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nmodules:\n- {name: language, num_ranks: 8, tp: 4, cp: 2}\n",
			[]at{{"group-crosses-node", 4, 45, "language"}}},
		// A tp_cp group spans nodes only when one of its tp or cp groups
		// does; the smaller group is the one named.
		{"tp_cp named through cp", "version: 1\ncluster: {nodes: 4, gpus_per_node: 2}\nmodules:\n- {name: language, num_ranks: 8, tp: 2, cp: 2}\n",
			[]at{{"group-crosses-node", 4, 45, "language"}}},
		{"tp_cp within a node", "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nmodules:\n- {name: language, num_ranks: 8, tp: 2, cp: 2}\n", nil},
		{"expt_tp spans nodes", "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nmodules:\n- {name: language, num_ranks: 8, tp: 4, expt_tp: 8}\n",
			[]at{{"group-crosses-node", 4, 50, "language"}}},
	})
}

// Each warning names the module, the group kind, how many groups cross,
// the first one's ranks and nodes, and a hint fitted to the cause.
func TestLocalityMessages(t *testing.T) {
	tests := []struct {
		name, src, message, hint string
	}{
		{"misaligned module", "version: 1\ncluster: {nodes: 4, gpus_per_node: 8}\nmodules:\n- {name: vision, num_ranks: 2, tp: 2}\n- {name: language, num_ranks: 30, tp: 3}\n",
			// language starts at 2: tp groups [14 15 16] and [23 24 25] straddle nodes.
			"2 of 10 tp groups span nodes; first: [14 15 16] on nodes 1-2 (gpus_per_node 8)",
			"the module starts at rank 2, inside node 0: make its rank_offset a multiple of gpus_per_node 8"},
		{"tp not a divisor of the node", "version: 1\ncluster: {nodes: 3, gpus_per_node: 4}\nmodules:\n- {name: language, num_ranks: 12, tp: 3}\n",
			"2 of 4 tp groups span nodes; first: [3 4 5] on nodes 0-1 (gpus_per_node 4)",
			"tp = 3 does not divide gpus_per_node 4, so some groups straddle a node boundary: make tp a divisor of 4"},
		{"tp larger than a node", "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nmodules:\n- {name: language, num_ranks: 8, tp: 8}\n",
			"1 of 1 tp groups span nodes; first: [0 1 2 3 4 5 6 7] on nodes 0-1 (gpus_per_node 4)",
			"a tp group of 8 ranks cannot fit the 4 GPUs of one node: lower tp to at most 4"},
		{"cp strided past the node, tp_cp named", "version: 1\ncluster: {nodes: 4, gpus_per_node: 2}\nmodules:\n- {name: language, num_ranks: 8, tp: 2, cp: 2}\n",
			"4 of 4 cp groups span nodes; first: [0 2] on nodes 0-1 (gpus_per_node 2); so do the tp_cp groups that hold them",
			"a cp group's ranks stretch over 3 consecutive ranks (its members are tp*gtp_remat = 2 apart), more than a node's 2 GPUs: lower tp*gtp_remat or cp"},
		{"cp members nodes apart", "version: 1\ncluster: {nodes: 8, gpus_per_node: 2}\nmodules:\n- {name: language, num_ranks: 16, tp: 2, gtp_remat: 2, cp: 4}\n",
			"4 of 4 cp groups span nodes; first: [0 4 8 12] on nodes 0, 2, 4, 6 (gpus_per_node 2); so do the tp_cp groups that hold them",
			"a cp group of 4 ranks cannot fit the 2 GPUs of one node: lower cp to at most 2"},
		{"long cp group elided", "version: 1\ncluster: {nodes: 20, gpus_per_node: 1}\nmodules:\n- {name: language, num_ranks: 20, cp: 20}\n",
			"1 of 1 cp groups span nodes; first: [0 1 2 3 4 5 6 7 ... (4 more) ... 12 13 14 15 16 17 18 19] on nodes 0-19 (gpus_per_node 1)",
			"a cp group of 20 ranks cannot fit the 1 GPU of one node: lower cp to at most 1"},
		{"long list of nodes elided", "version: 1\ncluster: {nodes: 40, gpus_per_node: 1}\nmodules:\n- {name: language, num_ranks: 40, tp: 2, cp: 20}\n",
			"2 of 2 cp groups span nodes; first: [0 2 4 6 8 10 12 14 ... (4 more) ... 24 26 28 30 32 34 36 38] on nodes 0, 2, 4, 6, 8, 10, 12, 14, ..., 24, 26, 28, 30, 32, 34, 36, 38 (20 in all) (gpus_per_node 1); so do the tp_cp groups that hold them",
			"a cp group of 20 ranks cannot fit the 1 GPU of one node: lower cp to at most 1"},
		{"expt_tp", "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nmodules:\n- {name: language, num_ranks: 8, tp: 4, expt_tp: 8}\n",
			"1 of 1 expt_tp groups span nodes; first: [0 1 2 3 4 5 6 7] on nodes 0-1 (gpus_per_node 4)",
			"an expt_tp group of 8 ranks cannot fit the 4 GPUs of one node: lower expt_tp to at most 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(tt.src)
			var msgs []string
			for _, d := range r.Diags.Items {
				if d.Rule == "group-crosses-node" {
					msgs = append(msgs, d.Message)
				}
			}
			require.Contains(t, msgs, tt.message)
			for _, d := range r.Diags.Items {
				if d.Message == tt.message {
					assert.Equal(t, diag.Warning, d.Severity)
					assert.Equal(t, "language", d.Module)
					assert.Contains(t, d.Hint, tt.hint)
				}
			}
			assert.True(t, r.Valid(false), "warnings keep a layout valid")
			assert.False(t, r.Valid(true), "unless strict")
			assert.NotNil(t, r.Topology)
		})
	}
}

// The whole rule set stays fast on the 131,072-rank layout.
func BenchmarkCheckScale(b *testing.B) {
	src := "version: 1\ncluster: {nodes: 16384, gpus_per_node: 8}\nbatch: {micro_batch_size: 1}\nmodules:\n- {name: vision, num_ranks: 16384, tp: 4}\n- {name: language, num_ranks: 114688, tp: 8, cp: 2, pp: 14, ep: 64}\n"
	b.ReportAllocs()
	for b.Loop() {
		run(src)
	}
}
