package validate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// With a core error, every rule whose inputs are sound is still reported,
// and the rules that need the placement or the grids stay quiet.
func TestStagedValidation(t *testing.T) {
	for _, tt := range []ruleCase{
		{"bridge size rules beside a world gap",
			"version: 1\ntarget: megatron-bridge\nworld_size: 16\nmodules:\n- {name: vision, num_ranks: 6, tp: 3, ep: 2}\n- {name: language, num_ranks: 4, gtp_remat: 2}\n",
			[]at{{"world-gap", 3, 13, ""}, {"tp-not-power-of-two", 5, 36, "vision"}, {"encoder-not-dense", 5, 43, "vision"}, {"gtp-unsupported", 6, 45, "language"}}},
		{"a module's sizes are checked when the one before it is broken",
			"version: 1\ntarget: megatron-bridge\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: x}\n- {name: language, num_ranks: 6, tp: 4}\n- {name: audio, num_ranks: 3, tp: 3}\n",
			[]at{{"invalid-value", 5, 29, "vision"}, {"dense-not-divisible", 6, 31, "language"}, {"tp-not-power-of-two", 7, 35, "audio"}}},
		{"megatron-lm sizes beside a span out of the world",
			// target_version 6894: before PR #7435 the example wants cp 1.
			"version: 1\ntarget: megatron-lm\ntarget_version: 6894\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, pp: 2}\n- {name: audio, num_ranks: 2}\n- {name: language, num_ranks: 4, cp: 2}\ntraining: {use_distributed_optimizer: true}\n",
			[]at{{"encoder-parallelism-unsupported", 6, 36, "vision"}, {"too-many-encoders", 7, 10, "audio"}, {"span-out-of-world", 8, 31, "language"}, {"cp-unsupported", 8, 38, "language"}}},
		{"micro-batch rules on the sound modules",
			"version: 1\ntarget: megatron-bridge\nworld_size: 8\nbatch: {micro_batch_size: 2}\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 6, tp: 4}\n",
			[]at{{"global-batch-required", 4, 8, ""}, {"micro-batch-not-divisible", 4, 27, "vision"}, {"dense-not-divisible", 7, 31, "language"}, {"span-out-of-world", 7, 31, "language"}}},
		{"lane batch rules need the language sizes, and have them",
			"version: 1\nworld_size: 4\nbatch: {micro_batch_size: 1}\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, tp: 2}\n",
			[]at{{"fanout-not-divisible", 3, 27, "vision"}, {"span-out-of-world", 6, 31, "language"}}},
		{"lane batch rules stay quiet without the language sizes",
			"version: 1\nworld_size: 8\nbatch: {micro_batch_size: 1}\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, tp: 3}\n",
			[]at{{"dense-not-divisible", 6, 31, "language"}}},
		// Grid-dependent rules: no communicator rule (vision's 3 lanes and
		// language's 2 do not divide), no node locality (tp 4 over nodes of
		// 2), no encoder-not-first while the placement is unsound.
		{"grid-dependent rules stay quiet",
			"version: 1\ntarget: megatron-lm\ncluster: {nodes: 8, gpus_per_node: 2}\nmodules:\n- {name: language, num_ranks: 8, tp: 4}\n- {name: vision, num_ranks: 6, rank_offset: 8, tp: 2}\n- {name: audio, num_ranks: 2, tp: 3}\ntraining: {use_distributed_optimizer: true}\n",
			[]at{{"too-many-encoders", 7, 10, "audio"}, {"dense-not-divisible", 7, 28, "audio"}}},
		{"overlap on the part inside the world",
			"version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 8, rank_offset: 2}\n",
			[]at{{"span-out-of-world", 5, 47, "language"}, {"span-overlap", 5, 47, "language"}}},
		// Identical inside the world: maybe meant to be colocated, and the
		// span is already reported.
		{"no overlap for a span identical inside the world",
			"version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, rank_offset: 4}\n- {name: language, num_ranks: 8, rank_offset: 4}\n",
			[]at{{"span-out-of-world", 5, 47, "language"}}},
		{"overlap between known spans beside a broken module",
			"version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: audio, num_ranks: y}\n- {name: language, num_ranks: 4, rank_offset: 2}\n",
			[]at{{"invalid-value", 5, 28, "audio"}, {"span-overlap", 6, 47, "language"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run(tt.src)
			assert.Nil(t, r.Topology)
			assert.Equal(t, tt.want, ats(r))
		})
	}
}

// The quiet rules above are not quiet for want of a reason: with audio's
// sizes fixed, the topology is built and each of them fires.
func TestStagedValidationGridRulesFire(t *testing.T) {
	r := run("version: 1\ntarget: megatron-lm\ncluster: {nodes: 8, gpus_per_node: 2}\nmodules:\n- {name: language, num_ranks: 8, tp: 4}\n- {name: vision, num_ranks: 6, rank_offset: 8, tp: 2}\n- {name: audio, num_ranks: 2, tp: 2}\ntraining: {use_distributed_optimizer: true}\n")
	assert.NotNil(t, r.Topology)
	rules := map[string]bool{}
	for _, d := range r.Diags.Items {
		rules[d.Rule] = true
	}
	for _, want := range []string{"too-many-encoders", "bridge-leaders-not-divisible", "group-crosses-node", "encoder-not-first"} {
		assert.True(t, rules[want], "%s in %v", want, ats(r))
	}
}
