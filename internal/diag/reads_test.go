package diag

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every rule of the catalogue declares what its verdict reads, in the
// vocabulary; nothing else is declared.
func TestEveryRuleDeclaresReads(t *testing.T) {
	t.Parallel()
	in := map[RuleID]bool{}
	for _, r := range Rules() {
		in[r.ID] = true
		s, ok := reads[r.ID]
		require.True(t, ok, "%s declares no inputs (diag/reads.go)", r.ID)
		assert.NotEmpty(t, s, r.ID)
		for _, target := range []string{"core", "megatron-lm", "megatron-bridge"} {
			for _, x := range Reads(r.ID, target) {
				assert.NoError(t, checkInput(x), "%s on %s", r.ID, target)
			}
		}
	}
	for id := range reads {
		assert.True(t, in[id], "%s is declared but not in the catalogue", id)
	}
	for id := range bridgeReads {
		assert.True(t, in[id], "%s is declared but not in the catalogue", id)
	}
	assert.Equal(t, []string{Anything}, Reads("no-such-rule", "core"))
	assert.Equal(t, []string{"modules.dp", "batch", "target"}, Reads(RuleGlobalBatchNotDivisible, "megatron-bridge"))
}
