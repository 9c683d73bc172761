package testutil

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// LoadMeasured decodes testdata/measured/name (the lent GPUs'
// measurements) into v, failing tb if the file is missing or not v's JSON.
func LoadMeasured(tb testing.TB, name string, v any) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "testdata", "measured", name))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
}
