package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/testutil"
)

// mimoplanIn is mimoplan with standard input.
func mimoplanIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return runFull(t, stdin, t.TempDir(), noProbe, args...)
}

func TestStdinLayout(t *testing.T) {
	raw, err := os.ReadFile(testutil.Layout("nemotron-vlm-8gpu.yaml"))
	require.NoError(t, err)
	file := writeLayout(t, string(raw))
	tests := []struct {
		name string
		args []string
	}{
		{"validate", []string{"validate", "--format", "json"}},
		{"render", []string{"render", "--format", "json"}},
		{"launch-plan", []string{"launch-plan", "--format", "json"}},
		{"estimate", []string{"estimate", "--format", "json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The same output as from the file, the file name aside.
			code, fromFile, errOut := mimoplan(t, append(tt.args, file)...)
			require.Equal(t, exitOK, code, errOut)
			code, fromStdin, errOut := mimoplanIn(t, string(raw), append(tt.args, "-")...)
			require.Equal(t, exitOK, code, errOut)
			// Compared as JSON: one writer escapes "<" as \u003c.
			var a, b any
			require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(fromFile, file, "<stdin>")), &a))
			require.NoError(t, json.Unmarshal([]byte(fromStdin), &b))
			assert.Equal(t, a, b)
		})
	}
	t.Run("diagnostics name <stdin>", func(t *testing.T) {
		code, out, _ := mimoplanIn(t, bad, "validate", "-")
		assert.Equal(t, exitInvalid, code)
		assert.Contains(t, out, "<stdin>:4:29: error:")
	})
	t.Run("once", func(t *testing.T) {
		code, _, errOut := mimoplanIn(t, good, "validate", "-", file, "-")
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, errOut, "'-' (standard input) is given 2 times")
	})
	t.Run("launch-plan carries the topology of a layout from standard input", func(t *testing.T) {
		code, out, errOut := mimoplanIn(t, good, "launch-plan", "-", "--", "train.py")
		assert.Equal(t, exitOK, code, errOut)
		assert.Contains(t, out, "MIMOPLAN_TOPOLOGY_JSON")
		topo := filepath.Join(t.TempDir(), "t.json")
		code, out, errOut = mimoplanIn(t, good, "launch-plan", "-", "--topology-out", topo, "--", "train.py")
		assert.Equal(t, exitOK, code, errOut)
		assert.Contains(t, out, "MIMOPLAN_TOPOLOGY="+topo)
		assert.FileExists(t, topo)
	})
}

// pipeHang bounds the wait for a command given a named pipe: a command
// that opened the pipe would wait on it forever. It catches that hang, not
// slowness, so it is far above what a loaded machine takes (milliseconds
// here, seconds at worst).
const pipeHang = 60 * time.Second

// A named pipe with no writer is refused at once, not waited on.
func TestFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "layout.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, cmd := range [][]string{{"validate", fifo}, {"render", fifo}, {"launch-plan", fifo, "--", "x"}} {
		t.Run(cmd[0], func(t *testing.T) {
			done := make(chan struct{})
			var code int
			var errOut string
			go func() {
				code, _, errOut = mimoplan(t, cmd...)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(pipeHang):
				t.Fatalf("still waiting on the pipe after %v", pipeHang)
			}
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, errOut, "is a named pipe (FIFO), not a regular file")
		})
	}
	code, _, errOut := mimoplan(t, "validate", t.TempDir())
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "is a directory")
	code, _, errOut = mimoplan(t, "validate", os.DevNull)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "is a device, not a regular file")

	// Every other file read by name: a hostfile, a suggest spec, a
	// Bridge script to import, a model's hf_config.
	four := writeLayout(t, "version: 1\ncluster: {nodes: 2, gpus_per_node: 1}\nmodules:\n- {name: language, num_ranks: 2}\n")
	hf := writeLayout(t, "version: 1\nworld_size: 1\nmodules:\n- {name: language, num_ranks: 1, model: {hf_config: "+fifo+"}}\n")
	for _, cmd := range [][]string{
		{"launch-plan", four, "--hostfile", fifo, "--", "x"},
		{"suggest", fifo},
		{"import", "bridge-env", "--from-script", fifo},
		{"validate", hf},
	} {
		t.Run(strings.Join(cmd[:2], " "), func(t *testing.T) {
			done := make(chan struct{})
			var code int
			var out, errOut string
			go func() {
				code, out, errOut = mimoplan(t, cmd...)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(pipeHang):
				t.Fatalf("still waiting on the pipe after %v", pipeHang)
			}
			assert.NotEqual(t, exitOK, code)
			assert.Contains(t, out+errOut, "is a named pipe (FIFO), not a regular file")
		})
	}
}

// An unreadable file among several gets an entry of its own in json and
// sarif (and stays on stderr in every format).
func TestUnreadableFileEntry(t *testing.T) {
	g := writeLayout(t, good)
	missing := filepath.Join(t.TempDir(), "missing.yaml")

	code, out, errOut := mimoplan(t, "validate", "--format", "json", g, missing)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "no such file")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	var r struct {
		File        string `json:"file"`
		Valid       bool   `json:"valid"`
		Errors      int    `json:"errors"`
		Diagnostics []struct {
			Rule    string `json:"rule"`
			Message string `json:"message"`
			Line    int    `json:"line"`
		} `json:"diagnostics"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &r))
	assert.Equal(t, missing, r.File)
	assert.False(t, r.Valid)
	assert.Equal(t, 1, r.Errors)
	require.Len(t, r.Diagnostics, 1)
	assert.Equal(t, "unreadable-file", r.Diagnostics[0].Rule)
	assert.Contains(t, r.Diagnostics[0].Message, "no such file")
	assert.Zero(t, r.Diagnostics[0].Line)

	code, out, _ = mimoplan(t, "validate", "--format", "sarif", g, missing)
	assert.Equal(t, exitUsage, code)
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Locations []struct {
					Physical struct {
						Artifact struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &log))
	require.Len(t, log.Runs, 1)
	var found bool
	for _, res := range log.Runs[0].Results {
		if res.RuleID == "unreadable-file" {
			found = true
			assert.Equal(t, "error", res.Level)
			require.NotEmpty(t, res.Locations)
			assert.Contains(t, res.Locations[0].Physical.Artifact.URI, "missing.yaml")
		}
	}
	assert.True(t, found, "an unreadable-file result: %s", out)

	// Text keeps it on stderr only.
	code, out, errOut = mimoplan(t, "validate", g, missing)
	assert.Equal(t, exitUsage, code)
	assert.NotContains(t, out, "missing.yaml")
	assert.Contains(t, errOut, "missing.yaml")
}

// Values reach the plan exactly, or are refused with the reason.
func TestEnvAndHostsExact(t *testing.T) {
	g := writeLayout(t, good)
	topo := filepath.Join(t.TempDir(), "t.json")
	envOf := func(out string) map[string]string {
		var p struct {
			Env map[string]string `json:"env"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &p))
		return p.Env
	}
	for _, v := range []string{"a\r\nb", "a\nb", "\r", `x,"y"`, " lead and trail "} {
		code, out, errOut := mimoplan(t, "launch-plan", g, "--format", "json", "--topology-out", topo, "--env", "X="+v, "--", "t.py")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, v, envOf(out)["X"], "--env")

		t.Setenv("MIMOPLAN_ENV", "X="+v)
		code, out, errOut = mimoplan(t, "launch-plan", g, "--format", "json", "--topology-out", topo, "--", "t.py")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, v, envOf(out)["X"], "MIMOPLAN_ENV")
		t.Setenv("MIMOPLAN_ENV", "")
	}

	four := writeLayout(t, "version: 1\ncluster: {nodes: 3, gpus_per_node: 1}\nmodules:\n- {name: language, num_ranks: 3}\n")
	// A topology file beside the layout, not in this directory.
	t.Setenv("MIMOPLAN_TOPOLOGY_OUT", topo)
	code, _, errOut := mimoplan(t, "launch-plan", four, "--hosts", "n0,n1\nn2", "--", "t.py")
	assert.Equal(t, exitUsage, code, "n2 is not dropped")
	assert.Contains(t, errOut, `host 1 "n1\nn2" is not a host name or address`)
	t.Setenv("MIMOPLAN_HOSTS", "n0,n1\nn2")
	code, _, errOut = mimoplan(t, "launch-plan", four, "--", "t.py")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `"n1\nn2"`)
	t.Setenv("MIMOPLAN_HOSTS", "")
	code, out, errOut := mimoplan(t, "launch-plan", four, "--hosts", "n0, n1", "--hosts", "n2", "--format", "json", "--", "t.py")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"n2"`)
}

// docs/rules.md shows the unreadable-file entry as validate prints it.
func TestUnreadableFileDoc(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "rules.md"))
	require.NoError(t, err)
	t.Chdir(t.TempDir())
	code, out, _ := mimoplan(t, "validate", "--format", "json", "missing.yaml")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, string(raw), "$ mimoplan validate --format json missing.yaml   # exit 2\n"+out)
}

// The plan and its topology are written together or not at all, and
// --out through a symbolic link writes the file it leads to.
func TestLaunchPlanWritesTogether(t *testing.T) {
	g := writeLayout(t, good)
	dir := t.TempDir()
	topo := filepath.Join(dir, "t.json")
	code, _, errOut := mimoplan(t, "launch-plan", g, "--topology-out", topo, "--out", filepath.Join(dir, "nodir", "plan.sh"), "--", "t.py")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "no such file")
	assert.NoFileExists(t, topo, "no topology without its plan")

	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	code, _, errOut = mimoplan(t, "launch-plan", g, "--out", sub, "--", "t.py")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "is a directory")
	assert.NoFileExists(t, sub+".topology.json")

	real := filepath.Join(dir, "real.sh")
	require.NoError(t, os.WriteFile(real, []byte("old"), 0o755))
	link := filepath.Join(dir, "plan.sh")
	require.NoError(t, os.Symlink(real, link))
	code, _, errOut = mimoplan(t, "launch-plan", g, "--topology-out", topo, "--out", link, "--", "t.py")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "a symbolic link, which mimoplan does not write through")
	b, err := os.ReadFile(real)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b), "the link's target is untouched")
	assert.NoFileExists(t, topo, "nor is the topology written")
}

// Every file mimoplan writes goes through atomicfile: preflight --emit
// refuses a symbolic link, a FIFO and a read-only file among its files
// (it wrote plan.json with os.WriteFile: a symlink's target was
// overwritten, a FIFO hung, kill -9 left half a file), and suggest --out
// and import --out refuse to replace their own input.
func TestWritesRefuse(t *testing.T) {
	l := writeLayout(t, good)
	for name, prepare := range map[string]func(p string) error{
		"symlink":   func(p string) error { return os.Symlink(filepath.Join(filepath.Dir(p), "elsewhere.json"), p) },
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"read-only": func(p string) error { return os.WriteFile(p, []byte("{}"), 0o444) },
	} {
		dir := t.TempDir()
		require.NoError(t, prepare(filepath.Join(dir, "plan.json")), name)
		code, _, errOut := mimoplan(t, "preflight", l, "--emit", dir)
		assert.Equal(t, exitUsage, code, "%s: %s", name, errOut)
		assert.Contains(t, errOut, "plan.json", name)
		assert.NoFileExists(t, filepath.Join(dir, "preflight.py"), "%s: together or not at all", name)
		assert.NoFileExists(t, filepath.Join(dir, "elsewhere.json"), name)
	}

	spec := filepath.Join(t.TempDir(), "spec.yaml")
	src := "version: 1\nworld_size: 4\nmodules: [{name: vision}, {name: language}]\n"
	require.NoError(t, os.WriteFile(spec, []byte(src), 0o644))
	code, _, errOut := mimoplan(t, "suggest", spec, "--out", spec)
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "this command's input")
	b, err := os.ReadFile(spec)
	require.NoError(t, err)
	assert.Equal(t, src, string(b), "the spec is untouched")
}
