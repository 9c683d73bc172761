package validate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// TestFirstStepChecksNameRules: every check docs/first-step-checks.md
// calls covered names a rule of the catalogue (the rule may cite the
// place upstream checks it first; scripts/triage-first-step-checks.py
// writes the page).
func TestFirstStepChecksNameRules(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "docs", "first-step-checks.md"))
	require.NoError(t, err)
	covered := 0
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) != 4 || !strings.HasPrefix(line, "| `") {
			continue
		}
		verdict := strings.TrimSuffix(cells[3], " |")
		if strings.HasPrefix(verdict, "out:") || strings.HasPrefix(verdict, "gap:") || strings.HasPrefix(verdict, "out of scope") {
			continue
		}
		id, _, _ := strings.Cut(verdict, " ")
		_, ok := diag.Lookup(id)
		assert.True(t, ok, "%s: %q is no rule", cells[0], id)
		covered++
	}
	assert.Greater(t, covered, 30)
}
