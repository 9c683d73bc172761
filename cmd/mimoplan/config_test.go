package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmd/root"
	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
)

func noProbe() (*gpuprobe.Snapshot, error) { return nil, &gpuprobe.UnavailableError{Reason: "none"} }

func writeConfig(t *testing.T, path, src string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	return path
}

// A flag's value comes from, in this order: the command line, its
// MIMOPLAN_* variable, the config file's section for the command, the
// config file's top level, the flag's default. One row per level.
func TestConfigPrecedence(t *testing.T) {
	g := writeLayout(t, good)
	tests := []struct {
		name string
		file string // the config file (--config); "" for none
		env  string // MIMOPLAN_FORMAT; "" for unset
		args []string
		want string // a line of the output that shows the format
	}{
		{"default", "", "", nil, "┌"},
		{"file, top level", "format: csv\n", "", nil, "module,group,index,size,ranks"},
		{"file, command's section over top level", "format: csv\nrender: {format: yaml}\n", "", nil, "modules:"},
		{"environment over file", "format: csv\nrender: {format: yaml}\n", "json", nil, `{"name":`},
		{"flag over environment", "format: csv\n", "json", []string{"--format", "markdown"}, "| group "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("MIMOPLAN_FORMAT", tt.env)
			args := append([]string{"render", g}, tt.args...)
			if tt.file != "" {
				args = append(args, "--config", writeConfig(t, filepath.Join(t.TempDir(), "c.yaml"), tt.file))
			}
			code, out, errOut := runIn(t, t.TempDir(), noProbe, args...)
			require.Equal(t, exitOK, code, errOut)
			assert.Contains(t, out, tt.want)
		})
	}
}

// Without --config, the file is $XDG_CONFIG_HOME/mimoplan/config.yaml,
// else .mimoplan.yaml in the current directory.
func TestConfigFileDiscovery(t *testing.T) {
	g := writeLayout(t, good)
	t.Setenv("MIMOPLAN_FORMAT", "")
	t.Setenv("MIMOPLAN_CONFIG", "")
	xdg, cwd := t.TempDir(), t.TempDir()
	t.Chdir(cwd)

	code, out, _ := runIn(t, xdg, noProbe, "validate", g)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "valid: non_colocated", "no file: the default, text")

	writeConfig(t, filepath.Join(cwd, ".mimoplan.yaml"), "validate: {format: github}\n")
	code, out, _ = runIn(t, xdg, noProbe, "validate", g)
	require.Equal(t, exitOK, code)
	assert.Equal(t, g+": valid: non_colocated, 8 ranks, target core: vision [0, 4), language [4, 8)\n", out, "github format: the verdict alone")

	writeConfig(t, filepath.Join(xdg, "mimoplan", "config.yaml"), "format: json\n")
	code, out, _ = runIn(t, xdg, noProbe, "validate", g)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, `"valid":true`, "the user's file comes before the directory's")

	other := writeConfig(t, filepath.Join(t.TempDir(), "other.yaml"), "format: sarif\n")
	code, out, _ = runIn(t, xdg, noProbe, "validate", "--config", other, g)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, `"version": "2.1.0"`, "--config comes before both")

	t.Setenv("MIMOPLAN_CONFIG", other)
	code, out, _ = runIn(t, xdg, noProbe, "validate", g)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, `"version": "2.1.0"`, "MIMOPLAN_CONFIG is --config")
}

// A value from the environment or the file is parsed as strictly as the
// flag, and the error names where it came from.
func TestConfigErrors(t *testing.T) {
	g := writeLayout(t, good)
	dir := t.TempDir()
	cfg := func(src string) string { return writeConfig(t, filepath.Join(dir, "c.yaml"), src) }
	tests := []struct {
		name     string
		env      map[string]string
		file     string
		args     []string
		contains string
	}{
		{"format render lacks, from the environment", map[string]string{"MIMOPLAN_FORMAT": "sarif"}, "", []string{"render", g},
			`mimoplan: invalid MIMOPLAN_FORMAT="sarif" (for --format): want one of text, json, yaml, csv, markdown`},
		{"format render lacks, from the file", nil, "format: sarif\n", []string{"render", g},
			"mimoplan: invalid format: sarif in " + filepath.Join(dir, "c.yaml") + " (for --format): want one of text, json, yaml, csv, markdown"},
		{"format from the command's section", nil, "render: {by: node}\n", []string{"render", g},
			"mimoplan: invalid render.by: node in " + filepath.Join(dir, "c.yaml") + " (for --by): want one of group, rank"},
		{"malformed number in the file", nil, "rank: five\n", []string{"render", g},
			`(for --rank): want a whole number`},
		{"malformed number from the environment", map[string]string{"MIMOPLAN_TOP": "abc"}, "", []string{"suggest", g},
			`mimoplan: invalid MIMOPLAN_TOP="abc" (for --top): want a whole number`},
		{"port out of range from the environment", map[string]string{"MIMOPLAN_MASTER_PORT": "99999"}, "", []string{"launch-plan", g, "--", "t.py"},
			`mimoplan: invalid MIMOPLAN_MASTER_PORT="99999" (for --master-port): want a decimal port in 1-65535`},
		{"port out of range in the file", nil, "master-port: 99999\n", []string{"launch-plan", g, "--", "t.py"},
			"mimoplan: invalid master-port: 99999 in " + filepath.Join(dir, "c.yaml") + " (for --master-port): want a decimal port in 1-65535"},
		{"a null in a list", nil, "hosts: [node0, null]\n", []string{"launch-plan", g, "--", "t.py"},
			"hosts: want a list of plain values"},
		{"a mapping where a value goes", nil, "hosts: {a: 1}\n", []string{"launch-plan", g, "--", "t.py"},
			"unknown key hosts.a"},
		{"unknown key", nil, "fromat: json\nrender: {stict: true}\n", []string{"validate", g},
			`unknown key fromat (did you mean format?), render.stict`},
		{"did you mean, in a section", nil, "rendr: {fromat: csv}\nsuggest: {tpo: 3}\n", []string{"validate", g},
			`unknown key rendr.fromat (did you mean render.fromat?), suggest.tpo (did you mean suggest.top?)`},
		{"a flag of another command", nil, "validate: {rank: 3}\n", []string{"validate", g},
			"unknown key validate.rank"},
		{"not YAML", nil, "format: [json\n", []string{"validate", g}, "mimoplan: config file " + filepath.Join(dir, "c.yaml") + ": "},
		{"missing --config file", nil, "", []string{"validate", "--config", filepath.Join(dir, "none.yaml"), g}, "mimoplan: config file: stat " + filepath.Join(dir, "none.yaml")},
		{"a FIFO", nil, "", []string{"validate", "--config", fifo(t), g}, "is a named pipe (FIFO), not a regular file"},
		{"too big", nil, "format: json\n#" + strings.Repeat("x", 1<<20) + "\n", []string{"validate", g}, "larger than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			args := tt.args
			if tt.file != "" {
				args = append([]string{"--config", cfg(tt.file)}, args...)
			}
			code, out, errOut := runIn(t, t.TempDir(), noProbe, args...)
			assert.Equal(t, exitUsage, code, "stdout: %s\nstderr: %s", out, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tt.contains)
		})
	}
}

// A top-level key applies to the commands that have the flag and is
// ignored by the others; lists become repeated flags.
func TestConfigSharedKeys(t *testing.T) {
	l := writeLayout(t, "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, tp: 2}\n")
	c := writeConfig(t, filepath.Join(t.TempDir(), "c.yaml"), "hosts: [node0, node1]\nmaster-port: \"010\"\nstrict: true\n")
	topo := filepath.Join(t.TempDir(), "t.json")
	code, out, errOut := runIn(t, t.TempDir(), noProbe, "launch-plan", "--config", c, "--topology-out", topo, l, "--", "t.py")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "node0")
	assert.Contains(t, out, "node1")
	assert.Contains(t, out, "--master-port=10 ", "a quoted port is decimal text")
	code, _, errOut = runIn(t, t.TempDir(), noProbe, "render", "--config", c, l)
	assert.Equal(t, exitOK, code, errOut)
}

func fifo(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "fifo.yaml")
	require.NoError(t, syscall.Mkfifo(p, 0o644))
	return p
}

// A config file found in the working directory (.mimoplan.yaml, which
// comes with a cloned repository) is named on stderr's first line and may
// not set what runs, where output goes or what is read; --verbose names
// any config file read.
func TestConfigLocalTrust(t *testing.T) {
	g := writeLayout(t, good)
	t.Setenv("MIMOPLAN_CONFIG", "")
	xdg, cwd := t.TempDir(), t.TempDir()
	t.Chdir(cwd)
	for _, src := range []string{
		"preflight: {entrypoint: \"touch pwned\"}\n", "launch-plan: {out: elsewhere.sh}\n", "env: [A=1]\n", "emit: dir\n",
		"topology-out: t.json\n", "image: evil\n", "sbatch: [wrap=x]\n", "run: true\n", "hosts: [h0]\n",
	} {
		writeConfig(t, filepath.Join(cwd, ".mimoplan.yaml"), src)
		code, out, errOut := runIn(t, xdg, noProbe, "launch-plan", g, "--", "t.py")
		assert.Equal(t, exitUsage, code, src)
		assert.Empty(t, out, src)
		assert.Contains(t, errOut, "a config file found in the working directory may not set what runs", src)
	}
	_, err := os.Stat(filepath.Join(cwd, "pwned"))
	assert.True(t, os.IsNotExist(err))

	writeConfig(t, filepath.Join(cwd, ".mimoplan.yaml"), "format: json\n")
	code, out, errOut := runIn(t, xdg, noProbe, "validate", g)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"valid":true`, "presentation flags apply")
	assert.True(t, strings.HasPrefix(errOut, "mimoplan: config file read: .mimoplan.yaml (found in the working directory"), errOut)

	user := writeConfig(t, filepath.Join(t.TempDir(), "c.yaml"), "format: json\n")
	code, _, errOut = runIn(t, xdg, noProbe, "validate", "--config", user, "--verbose", g)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "mimoplan: config file read: "+user+"\n", errOut)
	code, _, errOut = runIn(t, xdg, noProbe, "validate", "--config", user, g)
	require.Equal(t, exitOK, code)
	assert.Empty(t, errOut, "the user's own file is named with --verbose only")
}

// A config file's hosts (or MIMOPLAN_HOSTS) apply where they make sense:
// not to --format k8s, whose operator names the pods; the command line's
// --hosts is still refused there.
func TestConfigHostsNotForK8s(t *testing.T) {
	l := writeLayout(t, "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, tp: 2}\n")
	c := writeConfig(t, filepath.Join(t.TempDir(), "c.yaml"), "hosts: [node0, node1]\nmaster-addr: node0\n")
	for _, format := range []string{"k8s", "pytorchjob"} {
		code, out, errOut := runIn(t, t.TempDir(), noProbe, "launch-plan", "--config", c, l, "--format", format, "--image", "img", "--", "t.py")
		require.Equal(t, exitOK, code, errOut)
		assert.NotContains(t, out, "node1")
		code, _, errOut = runIn(t, t.TempDir(), noProbe, "launch-plan", "--config", c, l, "--format", format, "--image", "img", "--hosts", "a,b", "--", "t.py")
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, errOut, "drop --hosts")
	}
	code, out, errOut := runIn(t, t.TempDir(), noProbe, "launch-plan", "--config", c, l, "--format", "sh", "--", "t.py")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "node1", "sh plans take the file's hosts")
}

// Every flag is either one a working-directory config may set
// (cmdutil.LocalFlags) or one listed here as what runs, where output
// goes or what is read: a new flag must be put on one side.
func TestConfigLocalFlagsClassified(t *testing.T) {
	notLocal := []string{"entrypoint", "env", "image", "container-image", "container-mounts", "sbatch", "run", "out",
		"emit", "topology-out", "hostfile", "hosts", "master-addr", "from-script", "probe", "measured", "no-layout-args",
		"help", "config", "verbose", "version"}
	f := &cmdutil.Factory{IOStreams: &cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			assert.True(t, slices.Contains(cmdutil.LocalFlags, fl.Name) != slices.Contains(notLocal, fl.Name),
				"--%s of %s: in exactly one of cmdutil.LocalFlags and this test's notLocal", fl.Name, c.CommandPath())
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root.NewCmdRoot(f))
}
