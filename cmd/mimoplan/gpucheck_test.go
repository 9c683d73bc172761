package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/gpuprobe"
)

// probeStub stands in for the NVML probe and counts its calls.
type probeStub struct {
	snap  *gpuprobe.Snapshot
	err   error
	calls int
}

func countingProbe(t *testing.T, s *gpuprobe.Snapshot, err error) *probeStub {
	t.Helper()
	return &probeStub{snap: s, err: err}
}

// run is mimoplan with the stub as this machine's probe.
func (p *probeStub) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return run(t, func() (*gpuprobe.Snapshot, error) { p.calls++; return p.snap, p.err }, args...)
}

func TestValidateProbe(t *testing.T) {
	// Line 3, column 36 is the value of gpus_per_node.
	eightPerNode := writeLayout(t, "version: 1\nname: n\ncluster: {nodes: 1, gpus_per_node: 8}\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, tp: 2}\n")
	twoRanks := writeLayout(t, "version: 1\nworld_size: 2\nmodules:\n- {name: language, num_ranks: 2, tp: 2}\n")
	fourRanks := writeLayout(t, "version: 1\nworld_size: 4\nmodules:\n- {name: language, num_ranks: 4, tp: 2}\n")
	// llama3-8b on tp 2 needs about 95 GiB; on tp 2 with pp 2 about 58 GiB.
	bigModel := writeLayout(t, "version: 1\nworld_size: 2\nmodules:\n- {name: language, num_ranks: 2, tp: 2, model: {preset: llama3-8b}}\n")
	smallModel := writeLayout(t, "version: 1\nworld_size: 2\nmodules:\n- {name: language, num_ranks: 2, pp: 2, model: {preset: llama3-8b, num_layers: 8}}\n")
	declared := writeLayout(t, "version: 1\ncluster: {nodes: 1, gpus_per_node: 2, gpu_memory: 40GiB}\nmodules:\n- {name: language, num_ranks: 2, tp: 2, model: {preset: llama3-8b}}\n")
	tests := []struct {
		name    string
		visible *string // CUDA_VISIBLE_DEVICES; nil leaves it unset
		args    []string
		code    int
		stdout  []string
		absent  []string
	}{
		{name: "enough GPUs", args: []string{"validate", "--probe", twoRanks}, code: 0, stdout: []string{"valid:"}},
		{name: "no probe, no check", args: []string{"validate", fourRanks}, code: 0, absent: []string{"gpu-count-short"}},
		{
			name: "gpus_per_node short", args: []string{"validate", "--probe", eightPerNode}, code: 1,
			stdout: []string{":3:36: error: this machine has 2 visible GPUs but cluster.gpus_per_node is 8 [gpu-count-short]"},
		},
		{
			name: "no cluster: the world on one node", args: []string{"validate", "--probe", fourRanks}, code: 1,
			stdout: []string{":2:13: error: this machine has 2 visible GPUs but world_size is 4 [gpu-count-short]", "a layout without cluster runs on one node"},
		},
		{
			name: "bad CUDA_VISIBLE_DEVICES", visible: ptr("0,GPU-bogus"), args: []string{"validate", "--probe", twoRanks}, code: 1,
			stdout: []string{`"GPU-bogus" does not resolve to a GPU`, "[gpu-visible-devices]", `CUDA_VISIBLE_DEVICES="0,GPU-bogus" leaves 1 of this machine's 2 GPUs visible, but world_size is 2`},
		},
		{name: "UUID prefix", visible: ptr("GPU-bb,GPU-aa"), args: []string{"validate", "--probe", twoRanks}, code: 0, stdout: []string{"valid:"}},
		{
			name: "model larger than the GPUs", args: []string{"validate", "--probe", bigModel}, code: 1,
			stdout: []string{`:4:48: error: module "language": needs `, "more than this machine's GPU memory (80.00 GiB, NVML) [gpu-memory-short]"},
		},
		{name: "model fits the GPUs", args: []string{"validate", "--probe", smallModel}, code: 0, stdout: []string{"valid:"}, absent: []string{"gpu-memory-short"}},
		{name: "no probe, no memory limit", args: []string{"validate", bigModel}, code: 0, absent: []string{"gpu-memory-short"}},
		{
			name: "gpu_memory smaller than NVML's: reported once, against gpu_memory", args: []string{"validate", "--probe", declared}, code: 1,
			stdout: []string{"more than cluster.gpu_memory (40.00 GiB, line 2) [gpu-memory-short]"}, absent: []string{"NVML) [gpu-memory-short]"},
		},
		{
			name: "json carries the finding", args: []string{"validate", "--probe", "--format", "json", eightPerNode}, code: 1,
			stdout: []string{`"rule":"gpu-count-short"`, `"line":3`, `"column":36`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.visible != nil {
				t.Setenv(gpuprobe.VisibleDevicesEnv, *tt.visible)
			} else {
				unsetEnv(t, gpuprobe.VisibleDevicesEnv)
			}
			p := countingProbe(t, twoGPUs(), nil)
			code, out, errOut := p.run(t, tt.args...)
			assert.Equal(t, tt.code, code, "stdout: %s\nstderr: %s", out, errOut)
			for _, s := range tt.stdout {
				assert.Contains(t, out, s)
			}
			for _, s := range tt.absent {
				assert.NotContains(t, out, s)
			}
			wantCalls := 0
			if strings.Contains(strings.Join(tt.args, " "), "--probe") {
				wantCalls = 1
			}
			assert.Equal(t, wantCalls, p.calls)
		})
	}
}

func TestValidateProbeManyFilesProbesOnce(t *testing.T) {
	unsetEnv(t, gpuprobe.VisibleDevicesEnv)
	a := writeLayout(t, "version: 1\nworld_size: 2\nmodules:\n- {name: language, num_ranks: 2}\n")
	b := writeLayout(t, "version: 1\nworld_size: 4\nmodules:\n- {name: language, num_ranks: 4}\n")
	p := countingProbe(t, twoGPUs(), nil)
	code, out, _ := p.run(t, "validate", "--probe", "--format", "json", a, b)
	assert.Equal(t, exitInvalid, code)
	assert.Equal(t, 1, p.calls)
	dec := json.NewDecoder(strings.NewReader(out))
	var valid []bool
	for dec.More() {
		var r struct {
			Valid bool `json:"valid"`
		}
		require.NoError(t, dec.Decode(&r))
		valid = append(valid, r.Valid)
	}
	assert.Equal(t, []bool{true, false}, valid, "the 2-rank layout fits this machine, the 4-rank one does not")
}

func TestProbeFlagWithoutNVML(t *testing.T) {
	g := writeLayout(t, good)
	missing := &gpuprobe.UnavailableError{Reason: "libnvidia-ml.so.1 could not be loaded; is the NVIDIA driver installed?"}
	const noNVML = "mimoplan: NVML is unavailable: libnvidia-ml.so.1 could not be loaded; is the NVIDIA driver installed?\n"
	for _, args := range [][]string{
		{"validate", "--probe", g},
		{"launch-plan", "--probe", g, "--", "train.py"},
	} {
		t.Run(args[0], func(t *testing.T) {
			p := countingProbe(t, nil, missing)
			code, out, errOut := p.run(t, args...)
			assert.Equal(t, exitNoGPU, code)
			if args[0] == "validate" {
				assert.Contains(t, out, "valid: non_colocated", "the layout is still checked and reported")
			} else {
				assert.Empty(t, out, "no plan")
			}
			assert.Equal(t, noNVML, errOut)
		})
	}
	// An invalid layout's own diagnostics come first, then the probe's
	// error, and the exit code is the layout's.
	b := writeLayout(t, bad)
	for _, args := range [][]string{
		{"validate", "--probe", b},
		{"launch-plan", "--probe", b, "--", "train.py"},
	} {
		t.Run(args[0]+" invalid", func(t *testing.T) {
			p := countingProbe(t, nil, missing)
			code, out, errOut := p.run(t, args...)
			assert.Equal(t, exitInvalid, code)
			all := out + errOut
			i, j := strings.Index(all, "[dense-not-divisible]"), strings.Index(all, noNVML)
			assert.True(t, i >= 0 && j > i, "layout diagnostics, then the probe's error:\n%s", all)
		})
	}
}

func TestLaunchPlanProbe(t *testing.T) {
	unsetEnv(t, gpuprobe.VisibleDevicesEnv)
	eight := writeLayout(t, "version: 1\ncluster: {nodes: 1, gpus_per_node: 8}\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, tp: 2}\n")
	two := writeLayout(t, "version: 1\nworld_size: 2\nmodules:\n- {name: language, num_ranks: 2, tp: 2}\n")
	p := countingProbe(t, twoGPUs(), nil)

	code, out, errOut := p.run(t, "launch-plan", "--probe", eight, "--", "train.py")
	assert.Equal(t, exitInvalid, code)
	assert.Empty(t, out, "no plan for a machine that cannot run it")
	assert.Contains(t, errOut, "[gpu-count-short]")

	topo := filepath.Join(t.TempDir(), "topology.json")
	code, out, errOut = p.run(t, "launch-plan", "--probe", "--format", "json", "--topology-out", topo, two, "--", "train.py")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"nproc_per_node": 2`)
}

func TestProbeEnvOnlyForCommandsWithTheFlag(t *testing.T) {
	// MIMOPLAN_PROBE turns --probe on where the flag exists, and is
	// ignored by commands without it.
	t.Setenv("MIMOPLAN_PROBE", "true")
	unsetEnv(t, gpuprobe.VisibleDevicesEnv)
	p := countingProbe(t, twoGPUs(), nil)
	g := writeLayout(t, "version: 1\nworld_size: 2\nmodules:\n- {name: language, num_ranks: 2}\n")
	code, _, _ := p.run(t, "render", g)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, 0, p.calls)
	code, out, _ := p.run(t, "validate", g)
	assert.Equal(t, exitOK, code, out)
	assert.Equal(t, 1, p.calls)
}

func ptr(s string) *string { return &s }

// unsetEnv unsets an environment variable for one test, restoring it after.
func unsetEnv(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "") // registers the restore
	require.NoError(t, os.Unsetenv(key))
}
