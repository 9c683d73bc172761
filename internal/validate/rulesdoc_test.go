package validate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

type docRule struct {
	id, body string
}

// docRules splits docs/rules.md into its rule sections: each starts at a
// "### id" heading and runs to the next heading.
func docRules(t *testing.T) []docRule {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "docs", "rules.md"))
	require.NoError(t, err)
	var out []docRule
	var cur *docRule
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "### "):
			out = append(out, docRule{id: strings.TrimSpace(strings.TrimPrefix(line, "### "))})
			cur = &out[len(out)-1]
		case strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "# "):
			cur = nil
		case cur != nil:
			cur.body += line + "\n"
		}
	}
	return out
}

// TestRulesDocMatchesCatalogue: docs/rules.md has one section per
// catalogue rule, in catalogue order, and nothing else under ###.
func TestRulesDocMatchesCatalogue(t *testing.T) {
	var want, got []string
	for _, r := range diag.Rules() {
		want = append(want, string(r.ID))
	}
	for _, r := range docRules(t) {
		got = append(got, r.id)
	}
	assert.Equal(t, want, got, "docs/rules.md headings vs internal/diag/rules.go")
}

var (
	yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")
	// outputBlock is a YAML example followed by the diagnostics mimoplan
	// prints for it as layout.yaml.
	sourceLine  = regexp.MustCompile(`\*\* · source: (.*)`)
	outputBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```\n\n```\n(layout\\.yaml:.*?)```")
)

// TestRulesDocExamples: each section states its rule's severity and
// source, says how to fix it, and each of its YAML examples breaks it and
// nothing else.
func TestRulesDocExamples(t *testing.T) {
	for _, s := range docRules(t) {
		t.Run(s.id, func(t *testing.T) {
			r, ok := diag.Lookup(s.id)
			require.True(t, ok)
			assert.Contains(t, s.body, "**"+string(r.Severity)+"** · source: ")
			// The catalogue's source (which SARIF carries) is the doc's.
			if m := sourceLine.FindStringSubmatch(s.body); assert.NotNil(t, m) {
				assert.Equal(t, strings.ReplaceAll(m[1], "`", ""), r.Source)
			}
			assert.Contains(t, s.body, "\nFix: ")
			assert.Contains(t, s.body, "```", "an example")
			for _, m := range yamlBlock.FindAllStringSubmatch(s.body, -1) {
				l, d := layout.Parse("example.yaml", []byte(m[1]))
				res := validate.Check(l, d)
				var rules []string
				for _, x := range res.Diags.Items {
					rules = append(rules, x.Rule)
					// Every diagnostic can be acted on: a position, a
					// message and a hint.
					assert.Positive(t, x.Line, "line of %+v", x)
					assert.Positive(t, x.Column, "column of %+v", x)
					assert.NotEmpty(t, x.Message)
					if x.Rule != "yaml-syntax" { // the YAML parser's own messages have none
						assert.NotEmpty(t, x.Hint, "hint of %+v", x)
					}
				}
				require.NotEmpty(t, rules, "the example breaks its rule:\n%s", m[1])
				// A rule whose section says it is "Never alone:" names the
				// rules that always refuse its layouts too; its example
				// breaks it and one of those.
				beside := besideRules(s.body)
				for _, got := range rules {
					if !slices.Contains(beside, got) {
						assert.Equal(t, s.id, got, "the example breaks its rule and no other:\n%s", m[1])
					}
				}
				assert.Contains(t, rules, s.id, "the example breaks its rule:\n%s", m[1])
				if beside != nil {
					assert.Greater(t, len(rules), 1, "a rule never alone is not alone in its example")
				}
			}
			// Shown output is what mimoplan prints for the example.
			for _, m := range outputBlock.FindAllStringSubmatch(s.body, -1) {
				l, d := layout.Parse("layout.yaml", []byte(m[1]))
				var b bytes.Buffer
				require.NoError(t, diag.WriteText(&b, validate.Check(l, d).Diags))
				for _, line := range strings.Split(strings.TrimSpace(m[2]), "\n") {
					assert.Contains(t, b.String(), line+"\n")
				}
			}
		})
	}
}

// TestRulesDocShowsOutput: the output examples are found (so that the
// check above is not vacuous).
func TestRulesDocShowsOutput(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "docs", "rules.md"))
	require.NoError(t, err)
	assert.NotEmpty(t, outputBlock.FindAllStringSubmatch(string(raw), -1))
}

// neverAlone is a section's line naming the rules that always refuse its
// rule's layouts too, each in backquotes.
var (
	neverAlone = regexp.MustCompile(`(?m)^Never alone: (.*)$`)
	quotedID   = regexp.MustCompile("`([a-z0-9-]+)`")
)

// besideRules are the rules a section's "Never alone:" line names; nil
// without one.
func besideRules(body string) []string {
	m := neverAlone.FindStringSubmatch(body)
	if m == nil {
		return nil
	}
	var out []string
	for _, q := range quotedID.FindAllStringSubmatch(m[1], -1) {
		out = append(out, q[1])
	}
	return out
}
