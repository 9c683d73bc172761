package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/gpuprobe"
)

// Every candidate suggest prints is a layout validate accepts: write each
// of --all's candidates with --out's writer path (the best is written by
// the command itself) and read it back with validate.
func TestSuggestOutRoundTrip(t *testing.T) {
	for _, spec := range []string{"../../testdata/suggest/vlm-16gpu.yaml", "../../testdata/suggest/three-8gpu.yaml"} {
		out := filepath.Join(t.TempDir(), "layout.yaml")
		code, stdout, stderr := mimoplan(t, "suggest", spec, "--top", "3", "--out", out)
		require.Equal(t, 0, code, stdout+stderr)
		code, stdout, stderr = mimoplan(t, "validate", out)
		assert.Equal(t, 0, code, "validate %s: %s%s", out, stdout, stderr)
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Contains(t, string(data), "# Written by mimoplan suggest. Estimated step")
		assert.NotContains(t, string(data), "max_tp")
	}
}

func TestSuggestJSONShape(t *testing.T) {
	code, stdout, stderr := mimoplan(t, "suggest", "../../testdata/suggest/vlm-16gpu.yaml", "--all", "--format", "json")
	require.Equal(t, 0, code, stderr)
	var got struct {
		Candidates []struct {
			Score   map[string]any   `json:"score"`
			Modules []map[string]any `json:"modules"`
		} `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.NotEmpty(t, got.Candidates)
	for _, k := range []string{"name", "rank_offset", "num_ranks", "tp", "gtp_remat", "cp", "pp", "vpp", "dp", "ep", "expt_tp", "expt_gtp_remat"} {
		assert.Contains(t, got.Candidates[0].Modules[0], k)
	}
	assert.Contains(t, got.Candidates[0].Score, "step_s")
	code, top, _ := mimoplan(t, "suggest", "../../testdata/suggest/vlm-16gpu.yaml", "--format", "json")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(top), &got))
	assert.Len(t, got.Candidates, 5)
}

func TestSuggestNothingFits(t *testing.T) {
	// Megatron-LM's example wants the encoder first with pp 1, and this
	// spec fixes its pp at 2.
	p := writeLayout(t, "version: 1\ntarget: megatron-lm\nworld_size: 4\nmodules:\n  - {name: vision, pp: 2}\n  - {name: language}\ntraining: {use_distributed_optimizer: true}\n")
	code, stdout, _ := mimoplan(t, "suggest", p)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "no layout fits; the closest misses:")
	assert.Contains(t, stdout, "encoder-parallelism-unsupported")
	code, stdout, _ = mimoplan(t, "suggest", p, "--format", "json")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, `"candidates":[]`)
	assert.Contains(t, stdout, `"blocks"`)
}

func TestSuggestBadInput(t *testing.T) {
	bad := writeLayout(t, "version: 1\nworld_size: 4\nmodules:\n  - {name: language, max_tp: 0}\n")
	code, _, stderr := mimoplan(t, "suggest", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, ":4:30: error: module \"language\": max_tp must be at least 1")
	code, _, stderr = mimoplan(t, "suggest", bad, "--gpu", "V100")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `invalid --gpu "V100"`)
	code, _, _ = mimoplan(t, "suggest", filepath.Join(t.TempDir(), "none.yaml"))
	assert.Equal(t, 2, code)
	code, _, stderr = mimoplan(t, "suggest", bad, "--efficiency", "2")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "invalid --efficiency 2 (efficiency): want a number in 0.001-1")
	// Figures that pass a positivity check but make the model's times NaN
	// or +Inf (the table and yaml printed them with exit 0).
	for _, args := range [][]string{{"--efficiency", "1e-320"}, {"--peak-tflops", "1e-320"}, {"--network-gbps", "1e-320"},
		{"--nvlink-gbps", "NaN"}, {"--peak-tflops", "1e308"}, {"--network-gbps", "Inf"}} {
		code, stdout, stderr := mimoplan(t, append([]string{"suggest", "../../testdata/suggest/vlm-16gpu.yaml", "--top", "1"}, args...)...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assert.Empty(t, stdout, args)
		assert.Contains(t, stderr, "invalid "+args[0], args)
	}
}

// suggest --probe plans for this machine (a stand-in snapshot of two H100s:
// NVML cannot run here), and the layout it writes passes validate --probe
// on the same machine.
func TestSuggestProbe(t *testing.T) {
	unsetEnv(t, gpuprobe.VisibleDevicesEnv)
	spec := "../../testdata/suggest/three-8gpu.yaml"
	out := filepath.Join(t.TempDir(), "layout.yaml")
	p := countingProbe(t, twoGPUs(), nil)
	code, stdout, stderr := p.run(t, "suggest", spec, "--probe", "--all", "--format", "json", "--out", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, 1, p.calls)
	assert.Equal(t, "mimoplan: planning for this node (NVML): 2 x NVIDIA H100 80GB HBM3; cluster: {nodes: 1, gpus_per_node: 2, gpu_memory: 80GiB}\n"+
		spec+":3:36: note: this node's cluster.gpus_per_node 2 replaces the spec's 8\n"+
		"mimoplan: note: no module has a model, so every layout scores 0 s and the search cannot prune: it tries them by their sizes and stops after 250000000 search nodes (--max-nodes); give each module a model (model: {preset: ...} or hf_config) to rank them by time, or fix sizes (num_ranks, tp, pp, ...) to narrow the search\n", stderr)
	var got struct {
		Candidates []struct {
			Modules []struct {
				RankOffset int `json:"rank_offset"`
				NumRanks   int `json:"num_ranks"`
			} `json:"modules"`
		} `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.NotEmpty(t, got.Candidates)
	for _, c := range got.Candidates {
		for _, m := range c.Modules {
			assert.LessOrEqual(t, m.RankOffset+m.NumRanks, 2, "every candidate fits this node's 2 GPUs")
		}
	}
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), "cluster: {nodes: 1, gpus_per_node: 2, gpu_memory: 80GiB} # this node, probed: 2 x NVIDIA H100 80GB HBM3\n")
	code, stdout, stderr = p.run(t, "validate", "--probe", out)
	assert.Equal(t, exitOK, code, stdout+stderr)
	assert.Equal(t, 2, p.calls)

	// Without --probe the spec's own cluster counts, and NVML is not asked.
	code, stdout, _ = p.run(t, "suggest", spec, "--all", "--format", "json")
	require.Equal(t, exitOK, code)
	assert.Equal(t, 2, p.calls)
	assert.Contains(t, stdout, `"num_ranks":8`)
	// MIMOPLAN_PROBE turns it on, as for validate.
	t.Setenv("MIMOPLAN_PROBE", "true")
	code, _, stderr = p.run(t, "suggest", spec)
	require.Equal(t, exitOK, code)
	assert.Equal(t, 3, p.calls)
	assert.Contains(t, stderr, "planning for this node")
}

func TestSuggestProbeErrors(t *testing.T) {
	unsetEnv(t, gpuprobe.VisibleDevicesEnv)
	noCluster := writeLayout(t, "version: 1\nmodules:\n  - {name: language}\n")
	missing := &gpuprobe.UnavailableError{Reason: "libnvidia-ml.so.1 could not be loaded; is the NVIDIA driver installed?"}
	mixed := twoGPUs()
	mixed.GPUs[1].Name = "NVIDIA A100-SXM4-80GB"

	code, stdout, stderr := countingProbe(t, nil, missing).run(t, "suggest", noCluster, "--probe")
	assert.Equal(t, exitNoGPU, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "mimoplan: NVML is unavailable: libnvidia-ml.so.1 could not be loaded; is the NVIDIA driver installed?\n", stderr)

	code, _, stderr = countingProbe(t, &gpuprobe.Snapshot{}, nil).run(t, "suggest", noCluster, "--probe")
	assert.Equal(t, exitNoGPU, code)
	assert.Equal(t, "mimoplan: no GPU of this machine is visible to CUDA (NVML lists no GPU)\n", stderr)

	t.Run("CUDA_VISIBLE_DEVICES hides every GPU", func(t *testing.T) {
		t.Setenv(gpuprobe.VisibleDevicesEnv, "-1")
		code, _, stderr := countingProbe(t, twoGPUs(), nil).run(t, "suggest", noCluster, "--probe")
		assert.Equal(t, exitNoGPU, code)
		assert.Contains(t, stderr, `CUDA_VISIBLE_DEVICES="-1" leaves none of this machine's 2 GPUs (indices 0-1) visible`)
	})

	code, stdout, stderr = countingProbe(t, mixed, nil).run(t, "suggest", noCluster, "--probe")
	assert.Equal(t, exitInvalid, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "error: the visible GPUs are of 2 models: NVIDIA H100 80GB HBM3 (GPU 0), NVIDIA A100-SXM4-80GB (GPU 1)")

	code, _, stderr = countingProbe(t, twoGPUs(), nil).run(t, "suggest", noCluster)
	assert.Equal(t, exitInvalid, code, "without --probe a spec needs its cluster")
	assert.Contains(t, stderr, "layout needs world_size or cluster")
}

// TestSuggestBounded: a spec whose modules have no model cannot prune (the
// search ran past 600 s on 8 nodes x 8 GPUs): suggest says so before it
// starts, stops at --max-nodes with the best layout visited, says that it
// stopped, and reports progress off a terminal with --progress.
func TestSuggestBounded(t *testing.T) {
	p := writeLayout(t, "version: 1\ntarget: core\ncluster: {nodes: 8, gpus_per_node: 8}\nmodules: [{name: vision}, {name: audio}, {name: language}]\n")
	code, stdout, stderr := mimoplan(t, "suggest", p, "--top", "1", "--max-nodes", "200000", "--progress")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "language")
	lines := strings.Split(stderr, "\n")
	assert.True(t, strings.HasPrefix(lines[0], "mimoplan: note: no module has a model, so every layout scores 0 s and the search cannot prune"), stderr)
	assert.Contains(t, lines[0], "give each module a model")
	assert.Contains(t, stderr, "mimoplan: the search stopped at --max-nodes 200000 search nodes")

	code, _, stderr = mimoplan(t, "suggest", p, "--max-nodes", "0")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "invalid --max-nodes 0")

	// Some modules with a model: the note names the others.
	p = writeLayout(t, "version: 1\ntarget: core\ncluster: {nodes: 1, gpus_per_node: 8, gpu_memory: 80GiB}\nmodules:\n  - {name: vision}\n  - {name: language, model: {preset: llama3-8b}}\n")
	code, _, stderr = mimoplan(t, "suggest", p, "--top", "1")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, `mimoplan: note: no model in module(s) "vision"`)
	assert.NotContains(t, stderr, "stopped")
}

// failingWriter refuses every write, as /dev/full does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A write error on standard output ends every command with exit 2, also
// where the printer drops it (suggest's table, --help exited 0).
func TestStdoutWriteErrors(t *testing.T) {
	for _, args := range [][]string{
		{"suggest", "../../testdata/suggest/vlm-16gpu.yaml", "--top", "1"},
		{"suggest", "../../testdata/suggest/vlm-16gpu.yaml", "--format", "json"},
		{"--help"}, {"suggest", "--help"}, {"render", "../../layouts/nemotron-vlm-8gpu.yaml"},
		{"validate", "../../layouts/nemotron-vlm-8gpu.yaml"}, {"estimate", "../../layouts/nemotron-vlm-8gpu.yaml"},
	} {
		var errb strings.Builder
		code := execute(args, strings.NewReader(""), failingWriter{}, &errb)
		assert.Equal(t, exitUsage, code, "%v: %s", args, errb.String())
		assert.Contains(t, errb.String(), "no space left on device", args)
	}
}

// suggest - reads the spec from standard input, as from its file, and
// names it <stdin>; --target-version applies an upstream's rules over the
// spec's target_version.
func TestSuggestStdinAndTargetVersion(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "suggest", "vlm-16gpu.yaml")
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	code, fromFile, stderr := mimoplan(t, "suggest", path, "--top", "3", "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	code, fromStdin, stderr := mimoplanIn(t, string(src), "suggest", "-", "--top", "3", "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, fromFile, fromStdin)

	code, _, stderr = mimoplanIn(t, "version: [\n", "suggest", "-")
	assert.Equal(t, exitInvalid, code)
	assert.True(t, strings.HasPrefix(stderr, "<stdin>:2:1: error: "), stderr)

	// vlm-16gpu is a megatron-bridge spec: before Megatron-Bridge PR #4071
	// (2026-06-02) an encoder dp below the language dp is an error, so
	// fewer layouts are valid at 2026-06-01, and none of them with a
	// warning.
	count := func(args ...string) (layouts, warnings int) {
		code, out, stderr := mimoplan(t, append([]string{"suggest", path, "--all", "--format", "json"}, args...)...)
		require.Equal(t, exitOK, code, stderr)
		var res struct {
			Candidates []struct {
				Score struct{ Warnings int } `json:"score"`
			} `json:"candidates"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		for _, c := range res.Candidates {
			warnings += c.Score.Warnings
		}
		return len(res.Candidates), warnings
	}
	newest, newestWarnings := count()
	older, olderWarnings := count("--target-version", "2026-06-01")
	assert.Less(t, older, newest)
	assert.Positive(t, newestWarnings)
	assert.Zero(t, olderWarnings)
	code, _, stderr = mimoplan(t, "suggest", path, "--target-version", "someday")
	assert.Equal(t, exitUsage, code)
	assert.True(t, strings.HasPrefix(stderr, `mimoplan: --target-version: target version "someday" is not a date`), stderr)
}
