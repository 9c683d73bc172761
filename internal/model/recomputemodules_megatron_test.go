package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/testutil"
)

// recomputeModulesCase is one case of
// testdata/recompute-modules-megatron.json
// (scripts/gen-recompute-modules-fixtures.py): selective recompute of the
// named modules, with or without multi-latent attention and fp8, and what
// Megatron-LM's parse_args, validate_args and TransformerConfig made of
// the flags launch-plan writes for it.
type recomputeModulesCase struct {
	Case struct {
		RecomputeModules     []string `json:"recompute_modules"`
		MultiLatentAttention bool     `json:"multi_latent_attention"`
		FP8                  string   `json:"fp8"`
	} `json:"case"`
	Outcome string `json:"outcome"`
	Where   string `json:"where"`
	Message string `json:"message"`
	Config  *struct {
		RecomputeModules []string `json:"recompute_modules"`
	} `json:"config"`
}

// TestRecomputeModulesMatchesMegatron: where TransformerConfig raises on
// recompute_modules (transformer_config.py:1965, :1970, :2003 at
// d98e8a6), mimoplan refuses with recompute-module-unsupported at the key;
// where it builds, mimoplan reports nothing, and the config holds the
// modules launch-plan's flags gave.
func TestRecomputeModulesMatchesMegatron(t *testing.T) {
	cases := testutil.MegatronCases[recomputeModulesCase](t, "testdata/recompute-modules-megatron.json")
	require.Len(t, cases, 32)
	raised := map[string]int{}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := Config{NumExperts: 4, MoERouterTopK: 2, MultiLatentAttention: c.Case.MultiLatentAttention}
			tr := Training{RecomputeGranularity: RecomputeSelective, RecomputeModules: c.Case.RecomputeModules, FP8: c.Case.FP8}
			var got []string
			recomputeModules(cfg, tr, func(rule, key string, _ any, _ string, _ ...any) {
				assert.Equal(t, "training.recompute_modules", key)
				got = append(got, rule)
			})
			switch c.Outcome {
			case "raises":
				require.Contains(t, []string{"megatron/core/transformer/transformer_config.py:1965",
					"megatron/core/transformer/transformer_config.py:1970",
					"megatron/core/transformer/transformer_config.py:2003"}, c.Where, c.Message)
				assert.Equal(t, []string{RuleRecomputeModuleUnsupported}, got, "upstream raised at %s: %s", c.Where, c.Message)
				raised[c.Where]++
			case "ok":
				assert.Empty(t, got)
				require.NotNil(t, c.Config)
				assert.Equal(t, c.Case.RecomputeModules, c.Config.RecomputeModules)
			default:
				t.Fatalf("outcome %q", c.Outcome)
			}
		})
	}
	// The three upstream checks are in the grid.
	assert.Len(t, raised, 3)
}
