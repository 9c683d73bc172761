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

// MegatronCases reads a fixture a scripts/gen-*-fixtures.py wrote by
// running Megatron-LM's own code: its cases by name, checked to have run
// at MegatronCommit.
func MegatronCases[C any](t *testing.T, path string) map[string]C {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var f struct {
		Commit string       `json:"megatron_commit"`
		Cases  map[string]C `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &f), path)
	require.Equal(t, MegatronCommit, f.Commit, path)
	return f.Cases
}
