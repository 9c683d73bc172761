package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
)

// llm-only-not-whole-world mirrors --llm-only's own check. The core rules
// (span-out-of-world, world-gap) catch a lone module that misses the world
// first, so the rule is reached here by running it on a topology directly.
func TestLLMOnlyNotWholeWorld(t *testing.T) {
	for _, tt := range []struct {
		name  string
		world int
		want  []string
	}{
		{"covers the world", 8, nil},
		{"misses ranks", 16, []string{"llm-only-not-whole-world"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, d := layout.Parse("llm.yaml", []byte("version: 1\ntarget: megatron-lm\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 8, tp: 2}\n"))
			r := Check(l, d)
			require.NotNil(t, r.Topology)
			require.Empty(t, r.Diags.Items)
			r.Topology.WorldSize = tt.world
			c := &checker{l: l, d: d, r: r}
			c.megatronLM()
			var got []string
			for _, x := range d.Items {
				got = append(got, x.Rule)
				assert.Equal(t, 5, x.Line)
				assert.Equal(t, 31, x.Column, "at num_ranks")
				assert.Equal(t, "language", x.Module)
				assert.Contains(t, x.Hint, "num_ranks to 16")
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
