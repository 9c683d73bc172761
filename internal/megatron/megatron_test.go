package megatron

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/upstream"
)

// TestGridNames pins the two name sets: args.py's plain names (checked
// against the option list read from args.py at the mirror's commit) and
// PR #6894's --mimo-* ones.
func TestGridNames(t *testing.T) {
	assert.Equal(t, []string{"--encoder-tp", "--encoder-dp", "--llm-offset", "--llm-tp", "--llm-cp",
		"--llm-pp", "--llm-dp", "--llm-ep", "--llm-expt-tp", "--llm-only"}, Plain.Layout())
	assert.ElementsMatch(t, options.Grid, Plain.All(), "args.py at %s", options.Commit)
	for i, n := range Mimo.All() {
		assert.Equal(t, "--mimo-"+Plain.All()[i][2:], n)
	}
	for i, a := range GridArgs {
		assert.Equal(t, "--"+a.Key, Plain.Layout()[i])
	}
	names, other := GridFor(upstream.Latest())
	assert.Equal(t, Mimo, names)
	assert.Equal(t, Plain, other)
	old, err := upstream.Parse("2026-08-22")
	require.NoError(t, err)
	names, _ = GridFor(old)
	assert.Equal(t, Plain, names)
}

// TestVocabularyIsUpstreams: every name launch-plan writes is an option
// of Megatron-LM's parser at the mirrored commit, taking a value exactly
// when launch-plan gives one.
func TestVocabularyIsUpstreams(t *testing.T) {
	for _, g := range []Grid{Plain, Mimo} {
		for _, n := range g.All() {
			takes, ok := Option(n, g)
			assert.True(t, ok, n)
			assert.Equal(t, n != g.LLMOnly && n != g.EncoderDDPOverlap, takes, n)
		}
	}
	for _, n := range append(slices.Clone(Counts), GroupQueryAttention) {
		takes, ok := Option(n, Mimo)
		assert.True(t, ok, n)
		assert.Equal(t, n != GroupQueryAttention, takes, n)
	}
	for _, f := range []string{VirtualStages, DecoderFirst, DecoderLast, PipelineLayout} {
		takes, ok := Option(f, Mimo)
		assert.True(t, ok && takes, f)
	}
	for _, f := range []string{AccountEmbedding, AccountLoss, FreezeLanguage, FreezeEncoder} {
		takes, ok := Option(f, Mimo)
		assert.True(t, ok && !takes, f)
	}
	for _, f := range TrainingFlags {
		takes, ok := Option(f.Flag, Mimo)
		assert.True(t, ok, f.Flag)
		assert.Equal(t, f.On == "", takes, f.Flag)
		for _, a := range f.Aliases {
			takes, ok := Option(a.Flag, Mimo)
			assert.True(t, ok, a.Flag)
			assert.False(t, takes, "%s: an alias is a flag that sets one value", a.Flag)
		}
	}
	for _, f := range ModelFlags {
		takes, ok := Option(f.Flag, Mimo)
		assert.True(t, ok, f.Flag)
		assert.Equal(t, f.On == "", takes, f.Flag)
	}
}

func TestOptionAndClosest(t *testing.T) {
	for _, c := range []struct {
		name         string
		g            Grid
		known, takes bool
		closest      string
	}{
		{"--mimo-llm-tp", Mimo, true, true, "--mimo-llm-tp"},
		{"--mimo-llm-tpp", Mimo, false, false, "--mimo-llm-tp"},
		{"--llm-tp", Mimo, false, false, ""},       // the other generation: import tells it apart
		{"--mimo-llm-tp", Plain, false, false, ""}, // too far from --llm-tp
		{"--lr", Plain, true, true, "--lr"},
		{"--bf16", Plain, true, false, "--bf16"},
		{"--num-layer", Plain, false, false, "--num-layers"},
		{"--sequence-paralel", Mimo, false, false, "--sequence-parallel"},
		{"--zzzzzzzzzzzzzzzz", Mimo, false, false, ""},
	} {
		takes, ok := Option(c.name, c.g)
		assert.Equal(t, c.known, ok, c.name)
		assert.Equal(t, c.takes, takes, c.name)
		assert.Equal(t, c.closest, Closest(c.name, c.g), c.name)
		if !ok {
			err := Unknown(c.name, c.g)
			assert.ErrorContains(t, err, c.name+" is not an argument")
			if c.closest != "" {
				assert.ErrorContains(t, err, "did you mean "+c.closest+"?")
			}
		}
	}
	assert.Len(t, OptionsCommit(), 40)
}

func TestBridgeNames(t *testing.T) {
	for module, prefix := range map[string]string{"language": "LLM", "vision": "VISION", "audio": "AUDIO", "depth": "DEPTH"} {
		assert.Equal(t, prefix, BridgeEnvName(module))
		assert.Equal(t, module, BridgeModuleName(prefix))
	}
}

func TestTrainingArgs(t *testing.T) {
	assert.Empty(t, TrainingArgs(nil))
	assert.Equal(t, []string{"--use-distributed-optimizer", "--recompute-granularity", "selective", "--grad-reduce-in-bf16", "--fp8-format", "e4m3"},
		TrainingArgs([][2]string{{"use_distributed_optimizer", "true"}, {"recompute_granularity", "selective"},
			{"grad_reduce_in_fp32", "false"}, {"fp8", "e4m3"}}))
	_, ok := TrainingFlagOf("no_such_key")
	assert.False(t, ok)
}

// TestBridgeConfigFields: every training key's Bridge field is a field of
// its config dataclass at the mirrored Megatron-LM commit.
func TestBridgeConfigFields(t *testing.T) {
	var keys []string
	for _, c := range BridgeConfigs {
		keys = append(keys, c.Key)
		require.NotEmpty(t, c.Configs, c.Key)
		for _, cfg := range c.Configs {
			fields := ConfigFields(cfg)
			require.NotEmpty(t, fields, cfg)
			assert.Contains(t, fields, c.Key, "%s.%s", cfg, c.Key)
		}
	}
	var flags []string
	for _, f := range []string{VirtualStages, DecoderFirst, DecoderLast, PipelineLayout} {
		takes, ok := Option(f, Mimo)
		assert.True(t, ok && takes, f)
	}
	for _, f := range []string{AccountEmbedding, AccountLoss, FreezeLanguage, FreezeEncoder} {
		takes, ok := Option(f, Mimo)
		assert.True(t, ok && !takes, f)
	}
	for _, f := range TrainingFlags {
		flags = append(flags, f.Key)
	}
	assert.Equal(t, flags, keys)
}
