package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/testutil"
)

// row is a change as docs/rules.md's version table shows it.
func row(c Change) string {
	commit := "after the mirror's HEAD"
	if c.Commit != "" {
		commit = "`" + c.Commit[:12] + "`"
	}
	return fmt.Sprintf("| #%d | %s | %s | %s | %s | %s |", c.PR, c.Repo, c.Merged, commit, c.Kind, c.What)
}

// TestRulesDocTable: docs/rules.md's table is Changes, row for row.
func TestRulesDocTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "docs", "rules.md"))
	require.NoError(t, err)
	var got []string
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, "| #") {
			got = append(got, l)
		}
	}
	var want []string
	for _, c := range Changes {
		want = append(want, row(c))
	}
	if os.Getenv("MIMOPLAN_PRINT_TABLE") != "" {
		fmt.Println(strings.Join(want, "\n"))
	}
	assert.Equal(t, want, got)
}

func TestChangesInMergeOrder(t *testing.T) {
	for i := 1; i < len(Changes); i++ {
		assert.LessOrEqual(t, Changes[i-1].Merged, Changes[i].Merged, "PR #%d", Changes[i].PR)
	}
	for _, c := range Changes {
		assert.Contains(t, []string{"flag", "rule"}, c.Kind)
		assert.Contains(t, []string{MegatronLM, MegatronBridge}, c.Repo)
		if c.Repo == MegatronBridge {
			assert.Len(t, c.Commit, 40, "every Bridge change is in the Bridge mirror: PR #%d", c.PR)
		}
		if c.Commit != "" {
			assert.Len(t, c.Commit, 40, "PR #%d", c.PR)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		has  []int
		lack []int
	}{
		{"", []int{PRBridgeTraining, PRBridgeEncoderDP, PRBridgeExpert, PRArgs, PRBridgeGTP, PRGTP, PRDestinationCP, PRMimoNames}, nil},
		{"2026-04-09", nil, []int{PRBridgeTraining, PRArgs}},
		{"2026-04-10", []int{PRBridgeTraining}, []int{PRBridgeEncoderDP, PRArgs}},
		{"2869", []int{PRBridgeTraining}, []int{PRBridgeEncoderDP}},
		{"#4071", []int{PRBridgeTraining, PRBridgeEncoderDP}, []int{PRArgs, PRBridgeExpert}},
		{"2026-07-12", []int{PRArgs}, []int{PRBridgeExpert}},
		{"4485", []int{PRArgs, PRBridgeExpert}, []int{PRBridgeGTP}},
		{"2026-06-22", []int{PRBridgeEncoderDP}, []int{PRArgs}},
		{"2026-06-23", []int{PRArgs}, []int{PRBridgeGTP}},
		{"2026-08-22", []int{PRArgs, PRBridgeGTP, PRGTP}, []int{PRDestinationCP, PRMimoNames}},
		{"2026-08-26", []int{PRDestinationCP, PRMimoNames}, nil},
		{"2030-01-01", []int{PRMimoNames}, nil},
		{"6570", []int{PRArgs, PRBridgeGTP, PRGTP}, []int{PRDestinationCP, PRMimoNames}},
		{"#5720", []int{PRGTP, PRDestinationCP}, []int{PRMimoNames}},
		{"6894", []int{PRMimoNames}, nil},
		{"5375", []int{PRArgs}, []int{PRBridgeGTP}},
	} {
		v, err := Parse(tc.in)
		require.NoError(t, err, tc.in)
		for _, pr := range tc.has {
			assert.True(t, v.Has(pr), "%q has #%d", tc.in, pr)
		}
		for _, pr := range tc.lack {
			assert.False(t, v.Has(pr), "%q lacks #%d", tc.in, pr)
		}
	}
	for _, bad := range []string{"6", "#", "2026-13-01", "latest", "-6570", "6570x", "+6570"} {
		_, err := Parse(bad)
		assert.Error(t, err, bad)
	}
	assert.Equal(t, Latest(), mustParse(t, ""))
	assert.Contains(t, Latest().String(), "newest")
}

func mustParse(t *testing.T, s string) Version {
	v, err := Parse(s)
	require.NoError(t, err)
	return v
}
