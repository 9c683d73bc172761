package root

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
)

const spec = "../../../testdata/suggest/vlm-16gpu.yaml"

// execute runs args through Execute with buffers, no GPU and the config
// file config ("" for none).
func execute(t *testing.T, config string, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	if config != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o644))
		args = append([]string{"--config", filepath.Join(dir, "config.yaml")}, args...)
	}
	var stdout, stderr bytes.Buffer
	f := &cmdutil.Factory{
		IOStreams:  &cmdutil.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr},
		Version:    "v0-test",
		ProbeLocal: func() (*gpuprobe.Snapshot, error) { return nil, &gpuprobe.UnavailableError{Reason: "test"} },
		ConfigDir:  func() (string, error) { return dir, nil },
	}
	return Execute(f, args), stdout.String(), stderr.String()
}

func TestCommands(t *testing.T) {
	t.Parallel()
	var names []string
	for _, c := range NewCmdRoot(&cmdutil.Factory{IOStreams: &cmdutil.IOStreams{}}).Commands() {
		names = append(names, c.Name())
	}
	// cobra adds completion and help when it executes.
	assert.Equal(t, []string{"diff", "estimate", "import", "launch-plan", "preflight", "probe", "render", "suggest", "validate"}, names)
}

// No command's flag takes the name of one of root's persistent flags
// (--config): it would hide the config file from that command.
func TestNoFlagShadowsRoot(t *testing.T) {
	t.Parallel()
	root := NewCmdRoot(&cmdutil.Factory{IOStreams: &cmdutil.IOStreams{}})
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			assert.Nil(t, root.PersistentFlags().Lookup(f.Name), "%s --%s hides root's --%s", cmd.CommandPath(), f.Name, f.Name)
		})
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// Exit codes: cobra's own refusals and the commands' usage errors are 2,
// with one "mimoplan: " line on stderr.
func TestExecuteExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		config     string
		args       []string
		code       int
		stdout     string // a part of it
		stderrLine string // the whole of stderr, without its newline
	}{
		{"version", "", []string{"--version"}, exitcode.OK, "mimoplan version v0-test", ""},
		{"help", "", []string{"--help"}, exitcode.OK, "Exit codes: 0 valid, 1 invalid input, 2 usage error", ""},
		{"unknown command", "", []string{"plan"}, exitcode.Usage, "", `mimoplan: unknown command "plan" for "mimoplan"`},
		{"wrong argument count", "", []string{"render"}, exitcode.Usage, "", "mimoplan: accepts 1 arg(s), received 0"},
		{"unknown flag", "", []string{"render", "x.yaml", "--colour"}, exitcode.Usage, "", "mimoplan: unknown flag: --colour"},
		{"enum value", "", []string{"probe", "--format", "xml"}, exitcode.Usage, "", `mimoplan: invalid --format "xml": want one of text, json`},
		{"exclusive flags", "", []string{"suggest", spec, "--top", "1", "--all"}, exitcode.Usage, "",
			"mimoplan: if any flags in the group [top all] are set none of the others can be; [all top] were all set"},
		{"exclusive flags from the config file", "top: 1\nall: true\n", []string{"suggest", spec}, exitcode.Usage, "",
			"mimoplan: if any flags in the group [top all] are set none of the others can be; [all top] were all set"},
		{"hosts and hostfile", "", []string{"launch-plan", "x.yaml", "--hosts", "a", "--hostfile", "h"}, exitcode.Usage, "",
			"mimoplan: if any flags in the group [hosts hostfile] are set none of the others can be; [hostfile hosts] were all set"},
		{"missing file", "", []string{"estimate", "missing.yaml"}, exitcode.Usage, "", "mimoplan: read layout: stat missing.yaml: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := execute(t, tt.config, tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stdout, tt.stdout)
			if tt.stderrLine == "" {
				assert.Empty(t, stderr)
			} else {
				assert.Equal(t, tt.stderrLine+"\n", stderr)
			}
		})
	}
}

// A flag the config file sets yields to one it excludes on the command
// line, as any config value yields to the flag itself.
func TestConfigYieldsToExclusiveFlag(t *testing.T) {
	t.Parallel()
	code, all, stderr := execute(t, "", "suggest", spec, "--all", "--format", "json")
	require.Equal(t, exitcode.OK, code, stderr)
	for _, config := range []string{"top: 1\n", "suggest: {top: 1}\n"} {
		code, got, stderr := execute(t, config, "suggest", spec, "--all", "--format", "json")
		require.Equal(t, exitcode.OK, code, stderr)
		assert.Equal(t, all, got, "--all over the config's %q", config)
	}
	code, top1, stderr := execute(t, "top: 1\n", "suggest", spec, "--format", "json")
	require.Equal(t, exitcode.OK, code, stderr)
	assert.Less(t, len(top1), len(all), "the config's top applies without --all")
}

// Every enumerated flag completes to its values, and to nothing else.
func TestEnumFlagsComplete(t *testing.T) {
	t.Parallel()
	root := NewCmdRoot(&cmdutil.Factory{IOStreams: &cmdutil.IOStreams{}})
	found := 0
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			// Only an enumerated flag refuses a value with an EnumError.
			var ee *cmdutil.EnumError
			if !errors.As(f.Value.Set("no such value"), &ee) {
				return
			}
			found++
			complete, ok := cmd.GetFlagCompletionFunc(f.Name)
			require.True(t, ok, "%s --%s", cmd.CommandPath(), f.Name)
			got, directive := complete(cmd, nil, "")
			assert.Equal(t, ee.Allowed, got, "%s --%s", cmd.CommandPath(), f.Name)
			assert.Equal(t, cobra.ShellCompDirectiveNoFileComp, directive)
		})
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
	assert.GreaterOrEqual(t, found, 9, "--format of eight commands, render --by, launch-plan --rendezvous")

	code, stdout, stderr := execute(t, "", "__complete", "render", "l.yaml", "--format", "")
	require.Equal(t, exitcode.OK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	assert.Equal(t, []string{"text", "json", "yaml", "csv", "markdown", "svg", "html", ":4"}, lines)
}
