package testutil

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// MegatronCommit is the Megatron-LM commit the rule fixtures ran
// (scripts/gen-*-fixtures.py, the mirror's HEAD).
const MegatronCommit = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"

// LoadMegatron decodes a fixture a scripts/gen-*-fixtures.py wrote by
// running Megatron-LM's own code into v, failing t unless it names
// MegatronCommit (its "megatron_commit").
func LoadMegatron(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var head struct {
		Commit string `json:"megatron_commit"`
	}
	require.NoError(t, json.Unmarshal(data, &head), path)
	require.Equal(t, MegatronCommit, head.Commit, path)
	require.NoError(t, json.Unmarshal(data, v), path)
}

// MegatronCases reads such a fixture's cases by name.
func MegatronCases[C any](t *testing.T, path string) map[string]C {
	t.Helper()
	var f struct {
		Cases map[string]C `json:"cases"`
	}
	LoadMegatron(t, path, &f)
	return f.Cases
}
