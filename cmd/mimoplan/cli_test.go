package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmd/root"
	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
)

// Exit codes, as the README documents them.
const (
	exitOK      = exitcode.OK
	exitInvalid = exitcode.Invalid
	exitUsage   = exitcode.Usage
	exitNoGPU   = exitcode.NoGPU
)

// mimoplan runs the command line in-process and returns exit code, stdout
// and stderr. A --probe finds no GPU: tests that want one use
// countingProbe.
func mimoplan(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return run(t, func() (*gpuprobe.Snapshot, error) {
		return nil, &gpuprobe.UnavailableError{Reason: "no NVML in this test"}
	}, args...)
}

// execute runs the command line with the given streams, as main does but
// with no GPU to probe and an empty configuration directory.
func execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := &cmdutil.Factory{
		IOStreams: &cmdutil.IOStreams{In: stdin, Out: stdout, ErrOut: stderr},
		Version:   "dev",
		ProbeLocal: func() (*gpuprobe.Snapshot, error) {
			return nil, &gpuprobe.UnavailableError{Reason: "no NVML in this test"}
		},
		ConfigDir: func() (string, error) { return "", nil },
	}
	return root.Execute(f, args)
}

// run is mimoplan with probe as this machine's GPU probe. The user's
// configuration directory is an empty one, so that tests never read a
// config file of the machine they run on.
func run(t *testing.T, probe func() (*gpuprobe.Snapshot, error), args ...string) (int, string, string) {
	t.Helper()
	return runIn(t, t.TempDir(), probe, args...)
}

// runIn is run with configDir as the user's configuration directory.
func runIn(t *testing.T, configDir string, probe func() (*gpuprobe.Snapshot, error), args ...string) (int, string, string) {
	t.Helper()
	return runFull(t, "", configDir, probe, args...)
}

// runFull is runIn with stdin as standard input.
func runFull(t *testing.T, stdin, configDir string, probe func() (*gpuprobe.Snapshot, error), args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	f := &cmdutil.Factory{
		IOStreams:  &cmdutil.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errb},
		Version:    "dev",
		ProbeLocal: probe,
		ConfigDir:  func() (string, error) { return configDir, nil },
	}
	code := root.Execute(f, args)
	return code, out.String(), errb.String()
}

func writeLayout(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "layout.yaml")
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	return p
}

const good = "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, tp: 2}\n"
const bad = "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 3, tp: 2}\n- {name: language, num_ranks: 4, tp: 2}\n"

func TestExitCodes(t *testing.T) {
	g, b := writeLayout(t, good), writeLayout(t, bad)
	// Valid for the grid, but Megatron's BridgeCommunicator needs cp 1:
	// render prints the exact groups, validate fails.
	langCP := writeLayout(t, "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, cp: 2}\n")
	cpBridge := writeLayout(t, "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, cp: 2}\n- {name: language, num_ranks: 4}\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"valid", []string{"validate", g}, 0, "valid: non_colocated", ""},
		{"invalid", []string{"validate", b}, 1, ":4:29: error: module \"vision\": num_ranks 3 is not divisible", ""},
		{"invalid among several", []string{"validate", g, b}, 1, "invalid: 2 errors", ""},
		{"missing file", []string{"validate", filepath.Join(t.TempDir(), "nope.yaml")}, 2, "", "no such file"},
		{"no args", []string{"validate"}, 2, "", "requires at least 1 arg"},
		{"bad flag", []string{"validate", "--nope", g}, 2, "", "unknown flag"},
		{"bad format", []string{"validate", "--format", "xml", g}, 2, "", `invalid --format "xml"`},
		{"unknown command", []string{"frobnicate"}, 2, "", "unknown command"},
		{"render valid", []string{"render", g, "--format", "json"}, 0, `"mode":"non_colocated"`, ""},
		{"render invalid", []string{"render", b}, 1, "", "error: module \"vision\""},
		{"render unknown module", []string{"render", g, "--module", "audio"}, 2, "", `no module named "audio"`},
		{"render bad rank", []string{"render", g, "--rank", "99"}, 2, "", "outside the world"},
		{"render rank", []string{"render", g, "--rank", "5"}, 0, "rank 5", ""},
		{"render by rank", []string{"render", g, "--by", "rank", "--format", "csv"}, 0, "7,,,language", ""},
		{"render bad by", []string{"render", g, "--by", "node"}, 2, "", `invalid --by "node"`},
		{"version", []string{"--version"}, 0, "mimoplan version", ""},
		{"render runtime-invalid", []string{"render", cpBridge, "--format", "json"}, 0, `"cp":2`, "[bridge-cp-unsupported]"},
		{"validate runtime-invalid", []string{"validate", cpBridge}, 1, "[bridge-cp-unsupported]", ""},
		{"validate --target-version", []string{"validate", langCP, "--target-version", "2026-08-22"}, 1, "[bridge-cp-unsupported]", ""},
		{"validate, newest version", []string{"validate", langCP}, 0, "valid", ""},
		{"validate, bad --target-version", []string{"validate", langCP, "--target-version", "yesterday"}, 2, "", "--target-version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := mimoplan(t, tt.args...)
			assert.Equal(t, tt.code, code, "stdout: %s\nstderr: %s", out, errOut)
			// An empty expectation means the stream stays empty.
			if tt.stdout == "" {
				assert.Empty(t, out)
			} else {
				assert.Contains(t, out, tt.stdout)
			}
			if tt.stderr == "" {
				assert.Empty(t, errOut)
			} else {
				assert.Contains(t, errOut, tt.stderr)
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	b := writeLayout(t, bad)
	code, out, _ := mimoplan(t, "validate", "--format", "json", b)
	assert.Equal(t, 1, code)
	var r struct {
		File        string           `json:"file"`
		Valid       bool             `json:"valid"`
		Errors      int              `json:"errors"`
		Warnings    int              `json:"warnings"`
		Diagnostics []map[string]any `json:"diagnostics"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, b, r.File)
	assert.False(t, r.Valid)
	assert.Equal(t, 2, r.Errors)
	require.Len(t, r.Diagnostics, 2)
	assert.Equal(t, "world-gap", r.Diagnostics[0]["rule"])
	assert.Equal(t, "rank 7 of the world [0, 8) belongs to no module", r.Diagnostics[0]["message"])
	d := r.Diagnostics[1]
	assert.Equal(t, "dense-not-divisible", d["rule"])
	assert.Equal(t, "error", d["severity"])
	assert.Equal(t, float64(4), d["line"])
	assert.Equal(t, float64(29), d["column"])
	assert.Equal(t, "vision", d["module"])
}

// Flags can come from MIMOPLAN_* variables; the command line wins.
func TestEnvironment(t *testing.T) {
	g := writeLayout(t, good)
	t.Setenv("MIMOPLAN_FORMAT", "json")
	code, out, _ := mimoplan(t, "validate", g)
	assert.Equal(t, 0, code)
	assert.True(t, json.Valid([]byte(out)), out)
	code, out, _ = mimoplan(t, "validate", "--format", "text", g)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "valid: non_colocated")
}

// A MIMOPLAN_* value is parsed as strictly as the flag it stands for.
func TestEnvironmentValues(t *testing.T) {
	g := writeLayout(t, good)
	tests := []struct {
		env, value string
		args       []string
		code       int
		out, err   string
	}{
		{"MIMOPLAN_RANK", "5", []string{"render", g}, 0, "rank 5\n", ""},
		{"MIMOPLAN_RANK", "abc", []string{"render", g}, 2, "", `invalid MIMOPLAN_RANK="abc" (for --rank)`},
		{"MIMOPLAN_RANK", "-3", []string{"render", g}, 2, "", "outside the world"},
		{"MIMOPLAN_FULL", "maybe", []string{"render", g}, 2, "", `invalid MIMOPLAN_FULL="maybe" (for --full)`},
		{"MIMOPLAN_STRICT", "yes", []string{"validate", g}, 2, "", `invalid MIMOPLAN_STRICT="yes"`},
		{"MIMOPLAN_STRICT", "1", []string{"validate", g}, 0, "valid:", ""},
		{"MIMOPLAN_OMP_NUM_THREADS", "four", []string{"launch-plan", g, "--", "t.py"}, 2, "", `invalid MIMOPLAN_OMP_NUM_THREADS="four"`},
		{"MIMOPLAN_ITERS", "1.5", []string{"preflight", g, "--out", t.TempDir()}, 2, "", `invalid MIMOPLAN_ITERS="1.5"`},
		{"MIMOPLAN_TIMEOUT", "soon", []string{"preflight", g, "--out", t.TempDir()}, 2, "", `invalid MIMOPLAN_TIMEOUT="soon"`},
		{"MIMOPLAN_PROBE", "perhaps", []string{"validate", g}, 2, "", `invalid MIMOPLAN_PROBE="perhaps"`},
		{"MIMOPLAN_FORMAT", "", []string{"validate", g}, 0, "valid:", ""}, // empty is unset
	}
	for _, tt := range tests {
		t.Run(tt.env+"="+tt.value, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			code, out, errOut := mimoplan(t, tt.args...)
			assert.Equal(t, tt.code, code, "stdout: %s\nstderr: %s", out, errOut)
			assert.Contains(t, out, tt.out)
			assert.Contains(t, errOut, tt.err)
		})
	}
}

func TestRenderBadGroup(t *testing.T) {
	code, _, errOut := mimoplan(t, "render", writeLayout(t, good), "--group", "tensor")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "no group kind")
}

func TestCompletion(t *testing.T) {
	code, out, _ := mimoplan(t, "completion", "bash")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "bash completion")
}

func TestValidateJSONNotes(t *testing.T) {
	p := writeLayout(t, "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 2, global_batch_size: 16}\nmodules:\n- {name: vision, num_ranks: 4, tp: 1}\n- {name: language, num_ranks: 4, tp: 2}\n")
	code, out, _ := mimoplan(t, "validate", "--format", "json", p)
	assert.Equal(t, 0, code, out)
	var r struct {
		Notes []string `json:"notes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	// language dp 2: a step takes 2*2 = 4 samples; vision dp 4 gets 1 each;
	// 16 / 4 = 4 micro-batches.
	assert.Contains(t, strings.Join(r.Notes, "\n"), "vision micro-batch: 1 sample per dp rank (4 / dp 4)")
	assert.Contains(t, strings.Join(r.Notes, "\n"), "4 micro-batches per global batch (16 / 4)")

	code, out, _ = mimoplan(t, "validate", "--format", "json", writeLayout(t, good))
	assert.Equal(t, 0, code)
	assert.NotContains(t, out, `"notes"`, "no batch, no notes")
}
