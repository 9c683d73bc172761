package model

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/testutil"
)

// moeCapacityCase is one case of testdata/moe-capacity-megatron.json
// (scripts/gen-moe-capacity-fixtures.py): the training keys as a layout
// states them, and what Megatron-LM's parse_args, validate_args and
// TransformerConfig made of the flags launch-plan writes for them.
type moeCapacityCase struct {
	Training struct {
		MoETokenDispatcherType      string `json:"moe_token_dispatcher_type"`
		MoEExpertCapacityFactor     string `json:"moe_expert_capacity_factor"`
		MoEPadExpertInputToCapacity bool   `json:"moe_pad_expert_input_to_capacity"`
	} `json:"training"`
	Outcome string `json:"outcome"`
	Where   string `json:"where"`
	Message string `json:"message"`
	Config  *struct {
		MoEExpertCapacityFactor     *float64 `json:"moe_expert_capacity_factor"`
		MoEPadExpertInputToCapacity bool     `json:"moe_pad_expert_input_to_capacity"`
	} `json:"config"`
}

// TestMoECapacityMatchesMegatron: where TransformerConfig raises on the
// capacity settings (transformer_config.py:1758 and :1864 at d98e8a6),
// mimoplan refuses with moe-capacity-unsupported at the padding key; where
// it builds, mimoplan reports nothing, and the config holds the layout's
// factor and padding as launch-plan's flags gave them.
func TestMoECapacityMatchesMegatron(t *testing.T) {
	cases := testutil.MegatronCases[moeCapacityCase](t, "testdata/moe-capacity-megatron.json")
	require.Len(t, cases, 18)
	raised := map[string]int{}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ct := c.Training
			tr := Training{MoETokenDispatcherType: ct.MoETokenDispatcherType, MoEPadExpertInputToCapacity: ct.MoEPadExpertInputToCapacity}
			if tr.MoETokenDispatcherType == "allgather" {
				tr.MoETokenDispatcherType = "" // Megatron's default, as a layout holds it
			}
			if ct.MoEExpertCapacityFactor != "" {
				x, err := strconv.ParseFloat(ct.MoEExpertCapacityFactor, 64)
				require.NoError(t, err)
				tr.MoEExpertCapacityFactor = x
			}
			got := CheckMoECapacity(tr)
			switch c.Outcome {
			case "raises":
				require.Contains(t, []string{"megatron/core/transformer/transformer_config.py:1758",
					"megatron/core/transformer/transformer_config.py:1864"}, c.Where, c.Message)
				require.Len(t, got, 1, "upstream raised at %s: %s", c.Where, c.Message)
				assert.Equal(t, RuleMoECapacityUnsupported, got[0].Rule)
				assert.Equal(t, "training.moe_pad_expert_input_to_capacity", got[0].Key)
				raised[c.Where]++
			case "ok":
				assert.Empty(t, got)
				require.NotNil(t, c.Config)
				assert.Equal(t, ct.MoEPadExpertInputToCapacity, c.Config.MoEPadExpertInputToCapacity)
				if tr.MoEExpertCapacityFactor == 0 {
					assert.Nil(t, c.Config.MoEExpertCapacityFactor)
				} else if assert.NotNil(t, c.Config.MoEExpertCapacityFactor) {
					assert.Equal(t, tr.MoEExpertCapacityFactor, *c.Config.MoEExpertCapacityFactor)
				}
			default:
				t.Fatalf("outcome %q", c.Outcome)
			}
		})
	}
	// Both upstream checks are in the grid.
	assert.Len(t, raised, 2)
}
