package gpuprobe

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// h100Pair is a hand-made snapshot of two NVLinked H100s; the writers do
// not need NVML.
func h100Pair() *Snapshot {
	return &Snapshot{
		DriverVersion:     "570.86.15",
		CUDADriverVersion: "12.8",
		GPUs: []GPU{
			{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-aaaa", PCIBusID: "00000000:18:00.0", MemoryBytes: 85520809984, ComputeCapability: "9.0"},
			{Index: 1, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-bbbb", PCIBusID: "00000000:2a:00.0", MemoryBytes: 85520809984, ComputeCapability: "9.0",
				MIGEnabled: true, MIGDevices: []string{"MIG-1", "MIG-2"}},
		},
		Links: [][]Link{{LinkSelf, NVLink(18)}, {NVLink(18), LinkSelf}},
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, h100Pair()))
	out := b.String()
	assert.True(t, strings.HasPrefix(out, "Driver 570.86.15, CUDA 12.8, 2 GPUs\n"), out)
	for _, s := range []string{
		"PCI BUS ID", "NVIDIA H100 80GB HBM3", "GPU-aaaa", "00000000:2a:00.0",
		"79.6 GiB", "9.0", "off", "on, 2 instances",
		"GPU0", "GPU1", "NV18", "Legend:", "NV#  = a bonded set of # NVLinks", "SYS  = PCIe plus",
	} {
		assert.Contains(t, out, s)
	}
	assert.NotContains(t, out, "GPU 0 ", "headers are printed as given")
}

func TestWriteInaccessible(t *testing.T) {
	s := h100Pair()
	s.Inaccessible = []int{2, 3}
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, s))
	assert.Contains(t, b.String(), "No permission to open GPU 2, 3 (outside this job's device cgroup?)")

	b.Reset()
	require.NoError(t, WriteJSON(&b, s))
	assert.Contains(t, b.String(), `"inaccessible_gpus": [`)
}

func TestWriteTableNoGPUs(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, &Snapshot{DriverVersion: "570.86.15"}))
	assert.Equal(t, "Driver 570.86.15, CUDA -, 0 GPUs\n", b.String())
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, h100Pair()))

	var got map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	assert.Equal(t, "570.86.15", got["driver_version"])
	assert.Equal(t, "12.8", got["cuda_driver_version"])
	assert.Equal(t, []any{[]any{"X", "NV18"}, []any{"NV18", "X"}}, got["links"])
	gpus := got["gpus"].([]any)
	require.Len(t, gpus, 2)
	g0 := gpus[0].(map[string]any)
	assert.Equal(t, map[string]any{
		"index": 0.0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-aaaa", "pci_bus_id": "00000000:18:00.0",
		"memory_bytes": 85520809984.0, "compute_capability": "9.0", "mig_enabled": false, "mig_devices": []any{},
	}, g0, "no nulls: an empty MIG list is []")

	var back Snapshot
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	assert.Equal(t, h100Pair().GPUs[1], back.GPUs[1])
}

func TestWriteJSONEmpty(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, &Snapshot{}))
	assert.JSONEq(t, `{"driver_version":"","cuda_driver_version":"","gpus":[],"links":[]}`, b.String())
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWritersReportWriteErrors(t *testing.T) {
	err := WriteTable(failWriter{}, h100Pair())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "disk full")
	err = WriteJSON(failWriter{}, h100Pair())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "write probe JSON: disk full")
}

func TestFormatting(t *testing.T) {
	assert.Equal(t, "12.4", formatCUDAVersion(12040))
	assert.Equal(t, "13.0", formatCUDAVersion(13000))
	assert.Equal(t, "11.8", formatCUDAVersion(11080))
	assert.Equal(t, "", formatCUDAVersion(0))
	assert.Equal(t, "40 GiB", formatBytes(40<<30))
	assert.Equal(t, "79.6 GiB", formatBytes(85520809984))
	assert.True(t, NVLink(12).IsNVLink())
	assert.False(t, LinkNODE.IsNVLink())
	assert.False(t, LinkSYS.IsNVLink())
}

func TestUnavailableError(t *testing.T) {
	cause := errors.New("dlopen failed")
	err := error(&UnavailableError{Reason: "libnvidia-ml.so.1 could not be loaded", Err: cause})
	assert.EqualError(t, err, "NVML is unavailable: libnvidia-ml.so.1 could not be loaded")
	assert.ErrorIs(t, err, cause)
	assert.True(t, IsUnavailable(errors.Join(errors.New("probe"), err)))
	assert.False(t, IsUnavailable(cause))
	assert.False(t, IsUnavailable(nil))
}
