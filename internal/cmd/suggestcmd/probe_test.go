package suggestcmd

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
)

// --probe on a machine it cannot plan for ends with exit 3 and says why;
// on one it can, the node is the GPUs CUDA sees.
func TestProbeNode(t *testing.T) {
	t.Setenv(gpuprobe.VisibleDevicesEnv, "")
	os.Unsetenv(gpuprobe.VisibleDevicesEnv)
	gpus := func(n int) func() (*gpuprobe.Snapshot, error) {
		return func() (*gpuprobe.Snapshot, error) {
			s := &gpuprobe.Snapshot{DriverVersion: "570.86.15", CUDADriverVersion: "12.8"}
			for i := range n {
				s.GPUs = append(s.GPUs, gpuprobe.GPU{Index: i, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-" + string(rune('a'+i)), MemoryBytes: 80 << 30, MIGDevices: []string{}})
			}
			return s, nil
		}
	}
	tests := []struct {
		name  string
		probe func() (*gpuprobe.Snapshot, error)
		err   string
		gpus  int
	}{
		{"no NVML", func() (*gpuprobe.Snapshot, error) {
			return nil, &gpuprobe.UnavailableError{Reason: "libnvidia-ml.so.1 could not be loaded"}
		}, "NVML is unavailable: libnvidia-ml.so.1 could not be loaded", 0},
		{"no GPU", gpus(0), "no GPU of this machine is visible to CUDA (NVML lists no GPU)", 0},
		{"the probe's error", func() (*gpuprobe.Snapshot, error) { return nil, errors.New("NVML: count devices: boom") }, "boom", 0},
		{"two GPUs", gpus(2), "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			on, _, err := probeNode(tt.probe)()
			if tt.err == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.gpus, on.Cluster.GPUsPerNode)
				return
			}
			assert.Nil(t, on)
			code, ok := exitcode.Of(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, exitcode.NoGPU, code)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}
