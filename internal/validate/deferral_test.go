package validate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDeferral: every problem of the deferral is reported at once, each
// at its key, on every target; only the language module's pp counts (an
// encoder has no output layer to defer).
func TestDeferral(t *testing.T) {
	const needs, negative = "defer-embedding-wgrad-needs", "wgrad-deferral-limit-negative"
	for _, target := range []string{"core", "megatron-lm", "megatron-bridge"} {
		for _, tc := range []struct {
			name, training, language, vision string
			want                             []hit
		}{
			{"all three", "{use_distributed_optimizer: true, defer_embedding_wgrad_compute: true, gradient_accumulation_fusion: false, wgrad_deferral_limit: -3}",
				"{name: language, num_ranks: 4, rank_offset: 4}", "{name: vision, num_ranks: 4}",
				[]hit{{needs, 3, 76, ""}, {needs, 3, 76, ""}, {negative, 3, 141, ""}}},
			{"the language module's pp", "{use_distributed_optimizer: true, defer_embedding_wgrad_compute: true}",
				"{name: language, num_ranks: 4, rank_offset: 4, pp: 2}", "{name: vision, num_ranks: 4}", nil},
			{"a limit without deferral", "{use_distributed_optimizer: true, wgrad_deferral_limit: -1, gradient_accumulation_fusion: false}",
				"{name: language, num_ranks: 4, rank_offset: 4}", "{name: vision, num_ranks: 4}", nil},
		} {
			src := "version: 1\ntarget: " + target + "\ntraining: " + tc.training + "\nworld_size: 8\nmodules:\n- " + tc.vision + "\n- " + tc.language + "\n"
			var got []hit
			for _, h := range hits(check(src)) {
				if h.Rule == needs || h.Rule == negative {
					got = append(got, h)
				}
			}
			assert.Equal(t, tc.want, got, "%s, %s", target, tc.name)
		}
	}
}
