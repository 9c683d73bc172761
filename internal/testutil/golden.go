// Package testutil is what the tests of several packages share: the
// repository's layouts and fuzz seeds, the golden rank enumerations that
// Megatron's own HyperCommGrid produced (../shared/golden beside the
// repository), Kubernetes schemas.
package testutil

import (
	"os"
	"path/filepath"
	"runtime"
)

// RepoRoot returns the repository root, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// GoldenDir returns the golden directory: $MIMOPLAN_GOLDEN_DIR if set,
// else ../shared/golden beside the repository, else the copy kept in
// testdata/golden so that a lone clone still tests exactness.
func GoldenDir() string {
	if d := os.Getenv("MIMOPLAN_GOLDEN_DIR"); d != "" {
		return d
	}
	root := RepoRoot()
	shared := filepath.Join(root, "..", "shared", "golden")
	if st, err := os.Stat(filepath.Join(shared, "expected")); err == nil && st.IsDir() {
		return shared
	}
	return filepath.Join(root, "testdata", "golden")
}
