package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/gpuprobe"
)

// runProbe runs the root command with args and this machine's real NVML
// probe, and returns the exit code, stdout and stderr.
func runProbe(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return run(t, gpuprobe.ProbeLocal, args...)
}

func twoGPUs() *gpuprobe.Snapshot {
	return &gpuprobe.Snapshot{
		DriverVersion:     "570.86.15",
		CUDADriverVersion: "12.8",
		GPUs: []gpuprobe.GPU{
			{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-aaaa", PCIBusID: "00000000:18:00.0", MemoryBytes: 80 << 30, ComputeCapability: "9.0"},
			{Index: 1, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-bbbb", PCIBusID: "00000000:2a:00.0", MemoryBytes: 80 << 30, ComputeCapability: "9.0"},
		},
		Links: [][]gpuprobe.Link{{"X", "NV18"}, {"NV18", "X"}},
	}
}

func TestProbeWithoutNVML(t *testing.T) {
	// A library path that cannot exist makes this machine-independent: the
	// real NVML is asked, and fails to load, whether or not a driver is here.
	t.Setenv(gpuprobe.LibraryPathEnv, "/nonexistent/libnvidia-ml.so.1")
	for _, args := range [][]string{{"probe"}, {"probe", "--format", "json"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runProbe(t, args...)
			assert.Equal(t, exitNoGPU, code)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.True(t, strings.HasPrefix(stderr, "mimoplan: NVML is unavailable: "), stderr)
			// With cgo the library is missing; a CGO_ENABLED=0 build says
			// that instead.
			assert.True(t,
				strings.Contains(stderr, "/nonexistent/libnvidia-ml.so.1 (from MIMOPLAN_NVML_LIBRARY) could not be loaded") ||
					strings.Contains(stderr, "built without cgo"),
				stderr)
		})
	}
}

func TestProbeThisMachine(t *testing.T) {
	// The real NVML, as found here: a machine without a driver gets exit 3
	// and one line; one with a driver gets the listing.
	t.Setenv(gpuprobe.LibraryPathEnv, "")
	code, stdout, stderr := runProbe(t, "probe")
	switch code {
	case exitNoGPU:
		assert.Empty(t, stdout)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		assert.True(t, strings.HasPrefix(stderr, "mimoplan: NVML is unavailable: "), stderr)
	case exitOK:
		assert.Empty(t, stderr)
		assert.True(t, strings.HasPrefix(stdout, "Driver "), stdout)
	default:
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestProbeFailureExits3(t *testing.T) {
	p := countingProbe(t, nil, errors.New("NVML: GPU 3: get handle: ERROR_GPU_IS_LOST"))
	code, stdout, stderr := p.run(t, "probe")
	assert.Equal(t, exitNoGPU, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "mimoplan: NVML: GPU 3: get handle: ERROR_GPU_IS_LOST\n", stderr)
}

func TestProbeTable(t *testing.T) {
	p := countingProbe(t, twoGPUs(), nil)
	code, stdout, stderr := p.run(t, "probe")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	assert.True(t, strings.HasPrefix(stdout, "Driver 570.86.15, CUDA 12.8, 2 GPUs\n"), stdout)
	for _, s := range []string{"GPU-aaaa", "00000000:2a:00.0", "80 GiB", "NV18", "Legend:"} {
		assert.Contains(t, stdout, s)
	}
}

func TestProbeJSON(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  string
	}{
		{"flag", []string{"probe", "--format", "json"}, ""},
		{"environment", []string{"probe"}, "json"},
		{"flag wins over environment", []string{"probe", "--format=json"}, "table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := countingProbe(t, twoGPUs(), nil)
			t.Setenv("MIMOPLAN_FORMAT", tt.env)
			code, stdout, stderr := p.run(t, tt.args...)
			require.Equal(t, exitOK, code, stderr)
			var got gpuprobe.Snapshot
			require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
			assert.Equal(t, twoGPUs().GPUs[1].UUID, got.GPUs[1].UUID)
			assert.Equal(t, gpuprobe.NVLink(18), got.Links[0][1])
		})
	}
}

func TestProbeUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad format", []string{"probe", "--format", "xml"}, `invalid --format "xml": want one of text, json`},
		{"extra argument", []string{"probe", "gpu0"}, "unknown command"},
		{"unknown flag", []string{"probe", "--all"}, "unknown flag: --all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := countingProbe(t, nil, errors.New("must not be called"))
			code, stdout, stderr := p.run(t, tt.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.want)
		})
	}
}
