package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRulesDocLaunchExamples runs every `$ mimoplan launch-plan ...`
// example of docs/rules.md from the repository root and checks that each
// line the document shows is what the command prints (hints aside, which
// the document leaves out). The layout rules' examples are run by
// internal/validate's doc test.
func TestRulesDocLaunchExamples(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(root, "docs", "rules.md"))
	require.NoError(t, err)
	defer f.Close()

	type example struct {
		cmd  string
		want []string
	}
	var examples []example
	inConsole := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```console"):
			inConsole = true
		case strings.HasPrefix(line, "```"):
			inConsole = false
		case inConsole && strings.HasPrefix(line, "$ mimoplan launch-plan "):
			cmd, _ := cutComment(strings.TrimPrefix(line, "$ mimoplan "))
			examples = append(examples, example{cmd: strings.TrimSpace(cmd)})
		case inConsole && len(examples) > 0 && line != "":
			e := &examples[len(examples)-1]
			e.want = append(e.want, line)
		}
	}
	require.NoError(t, sc.Err())
	require.GreaterOrEqual(t, len(examples), 5, "the launch rules' examples")

	t.Chdir(root)
	for _, e := range examples {
		t.Run(e.cmd, func(t *testing.T) {
			code, out, errOut := mimoplan(t, strings.Fields(e.cmd)...)
			assert.Equal(t, exitInvalid, code, "every example shows a refusal")
			got := strings.Split(out+errOut, "\n")
			for _, w := range e.want {
				assert.Contains(t, got, w)
			}
		})
	}
}
