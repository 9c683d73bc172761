package validate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// TestTECrossEntropyArgsMatchMegatron: scripts/gen-te-cross-entropy-args-fixtures.py
// ran Megatron-LM's MIMO example's argument validation (_parse_and_validate)
// on --cross-entropy-loss-fusion or not with --cross-entropy-fusion-impl
// native or te. On target megatron-lm at that commit,
// te-cross-entropy-fusion-disabled reports exactly the case upstream
// refuses, citing the line it refuses at, and what it accepts stays as
// given.
func TestTECrossEntropyArgsMatchMegatron(t *testing.T) {
	cases := testutil.MegatronCases[struct {
		Fusion  bool           `json:"cross_entropy_loss_fusion"`
		Impl    string         `json:"cross_entropy_fusion_impl"`
		Outcome string         `json:"outcome"`
		Where   string         `json:"where"`
		Result  map[string]any `json:"result"`
	}](t, "testdata/te-cross-entropy-args-megatron.json")
	require.Len(t, cases, 4)
	rule, ok := diag.Lookup(string(diag.RuleTECrossEntropyDisabled))
	require.True(t, ok)
	refused := 0
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			// The newest target_version, the mirror's head the script ran.
			src := fmt.Sprintf("version: 1\ntarget: megatron-lm\nworld_size: 1\nbatch: {micro_batch_size: 1, global_batch_size: 8}\n"+
				"training: {use_distributed_optimizer: true, cross_entropy_loss_fusion: %t, cross_entropy_fusion_impl: %s}\n"+
				"modules:\n- name: language\n  num_ranks: 1\n  model: {num_layers: 72, hidden_size: 64, num_attention_heads: 4, seq_length: 64, vocab_size: 128}\n",
				c.Fusion, c.Impl)
			l, d := layout.Parse("lm.yaml", []byte(src))
			r := Check(l, d)
			fired := false
			for _, it := range r.Diags.Items {
				if it.Rule == string(diag.RuleTECrossEntropyDisabled) {
					fired = true
				}
			}
			switch c.Outcome {
			case "ok":
				assert.False(t, fired)
				assert.Equal(t, c.Fusion, c.Result["cross_entropy_loss_fusion"])
				assert.Equal(t, c.Impl, c.Result["cross_entropy_fusion_impl"])
			case "raises":
				refused++
				assert.True(t, fired, "upstream raises at %s", c.Where)
				assert.True(t, citesLine(rule.Source, c.Where), "%s cites %s", rule.Source, c.Where)
			default:
				t.Fatalf("outcome %s", c.Outcome)
			}
		})
	}
	assert.Equal(t, 1, refused, "fusion with te alone")
}
