//go:build cgo

package gpuprobe

import (
	"errors"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
)

func TestProbeDGXA100(t *testing.T) {
	s := newDGX(t)
	snap := probeDGX(t, s)

	assert.Equal(t, "550.54.15", snap.DriverVersion)
	assert.Equal(t, "12.4", snap.CUDADriverVersion)
	require.Len(t, snap.GPUs, 8)
	for i, g := range snap.GPUs {
		assert.Equal(t, i, g.Index)
		assert.Equal(t, "Mock NVIDIA A100-SXM4-40GB", g.Name)
		assert.Equal(t, testUUID(i), g.UUID)
		assert.Equal(t, uint64(40<<30), g.MemoryBytes)
		assert.Equal(t, "8.0", g.ComputeCapability)
		assert.False(t, g.MIGEnabled)
		assert.Empty(t, g.MIGDevices)
	}
	assert.Equal(t, "00000000:07:00.0", snap.GPUs[0].PCIBusID)
	assert.Equal(t, "00000000:bd:00.0", snap.GPUs[7].PCIBusID, "bus ids are lower case")

	// Every GPU reaches every other through the NVSwitches at 12 links.
	require.Len(t, snap.Links, 8)
	for i := range 8 {
		require.Len(t, snap.Links[i], 8)
		for j := range 8 {
			want := NVLink(12)
			if i == j {
				want = LinkSelf
			}
			assert.Equal(t, want, snap.Links[i][j], "link %d-%d", i, j)
		}
	}

	assert.Len(t, s.InitCalls(), 1)
	assert.Len(t, s.ShutdownCalls(), 1, "NVML is shut down after the probe")
}

func TestProbeLinks(t *testing.T) {
	tests := []struct {
		name  string
		setup func(s *dgxa100.Server)
		want  map[[2]int]Link // pairs not listed: as the PCIe tree says
	}{
		{
			name: "PCIe only",
			setup: func(s *dgxa100.Server) {
				for i := range 8 {
					setNoNVLink(dev(s, i))
				}
			},
			want: map[[2]int]Link{{0, 1}: LinkPXB, {0, 2}: LinkNODE, {0, 3}: LinkNODE, {0, 4}: LinkSYS, {6, 7}: LinkPXB, {3, 4}: LinkSYS},
		},
		{
			name: "direct NVLink bridges between pairs",
			setup: func(s *dgxa100.Server) {
				for i := range 8 {
					setDirectNVLinks(dev(s, i), map[int]int{i ^ 1: 4})
				}
			},
			want: map[[2]int]Link{{0, 1}: NVLink(4), {2, 3}: NVLink(4), {6, 7}: NVLink(4), {0, 2}: LinkNODE, {1, 7}: LinkSYS},
		},
		{
			name: "NVSwitch with a GPU that lost links takes the smaller count",
			setup: func(s *dgxa100.Server) {
				setNVSwitch(dev(s, 5), 10)
			},
			want: map[[2]int]Link{{0, 1}: NVLink(12), {5, 0}: NVLink(10), {4, 5}: NVLink(10)},
		},
		{
			name: "NVSwitch GPU next to a PCIe-only GPU",
			setup: func(s *dgxa100.Server) {
				setNoNVLink(dev(s, 3))
			},
			want: map[[2]int]Link{{0, 1}: NVLink(12), {2, 3}: LinkPXB, {3, 7}: LinkSYS},
		},
		{
			name: "topology query fails: unknown, not an error",
			setup: func(s *dgxa100.Server) {
				for i := range 8 {
					setNoNVLink(dev(s, i))
				}
				dev(s, 2).GetTopologyCommonAncestorFunc = func(nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
					return 0, nvml.ERROR_NOT_SUPPORTED
				}
			},
			want: map[[2]int]Link{{2, 3}: LinkUnknown, {2, 7}: LinkUnknown, {0, 1}: LinkPXB, {2, 2}: LinkSelf},
		},
		{
			name: "NVLink state errors leave the PCIe level",
			setup: func(s *dgxa100.Server) {
				for i := range 8 {
					dev(s, i).GetNvLinkStateFunc = func(int) (nvml.EnableState, nvml.Return) {
						return 0, nvml.ERROR_UNKNOWN
					}
				}
			},
			want: map[[2]int]Link{{0, 1}: LinkPXB, {0, 7}: LinkSYS},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newDGX(t)
			tt.setup(s)
			snap := probeDGX(t, s)
			for pair, want := range tt.want {
				i, j := pair[0], pair[1]
				assert.Equal(t, want, snap.Links[i][j], "link %d-%d", i, j)
				assert.Equal(t, want, snap.Links[j][i], "link %d-%d is symmetric", j, i)
			}
		})
	}
}

func TestPCIeLink(t *testing.T) {
	tests := []struct {
		level nvml.GpuTopologyLevel
		want  Link
	}{
		{nvml.TOPOLOGY_INTERNAL, "X"},
		{nvml.TOPOLOGY_SINGLE, "PIX"},
		{nvml.TOPOLOGY_MULTIPLE, "PXB"},
		{nvml.TOPOLOGY_HOSTBRIDGE, "PHB"},
		{nvml.TOPOLOGY_NODE, "NODE"},
		{nvml.TOPOLOGY_SYSTEM, "SYS"},
		{nvml.GpuTopologyLevel(99), "?"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, pcieLink(tt.level), "level %d", tt.level)
	}
}

func TestProbeMIG(t *testing.T) {
	s := newDGX(t)
	enableMIG(dev(s, 2), "MIG-aaaa1111-0000-0000-0000-000000000000", "MIG-bbbb2222-0000-0000-0000-000000000000")
	snap := probeDGX(t, s)
	assert.True(t, snap.GPUs[2].MIGEnabled)
	assert.Equal(t, []string{"MIG-aaaa1111-0000-0000-0000-000000000000", "MIG-bbbb2222-0000-0000-0000-000000000000"}, snap.GPUs[2].MIGDevices)
	assert.False(t, snap.GPUs[1].MIGEnabled)
}

func TestProbeInaccessibleGPUs(t *testing.T) {
	// Under Slurm's ConstrainDevices NVML counts every GPU but opens only
	// the job's; the others are left out, and said so.
	s := newDGX(t)
	s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i == 0 || i == 5 {
			return nil, nvml.ERROR_NO_PERMISSION
		}
		return s.Devices[i], nvml.SUCCESS
	}
	snap := probeDGX(t, s)
	assert.Equal(t, []int{0, 5}, snap.Inaccessible)
	require.Len(t, snap.GPUs, 6)
	assert.Equal(t, []int{1, 2, 3, 4, 6, 7}, []int{snap.GPUs[0].Index, snap.GPUs[1].Index, snap.GPUs[2].Index, snap.GPUs[3].Index, snap.GPUs[4].Index, snap.GPUs[5].Index})
	assert.Equal(t, testUUID(6), snap.GPUs[4].UUID)
	require.Len(t, snap.Links, 6)
	assert.Equal(t, NVLink(12), snap.Links[0][5])

	got := Check(snap, Need{GPUs: 8, At: diag.Pos{Line: 2, Column: 3}}, "", false)
	assertDiags(t, got, []want{{
		rule: diag.RuleGPUCountShort, severity: diag.Error, pos: diag.Pos{Line: 2, Column: 3},
		message: []string{"this machine has 6 visible GPUs but cluster.gpus_per_node is 8", "NVML also counts GPU 0, 5, which this process may not open"},
	}})
	// CUDA numbers the GPUs it can open from 0: index 5 is NVML's GPU 7.
	assert.Empty(t, Check(snap, Need{GPUs: 1}, "5", true))
	assertDiags(t, Check(snap, Need{}, "6", true), []want{{
		rule: diag.RuleGPUVisibleDevices, severity: diag.Error, message: []string{"there is no GPU 6: this machine has 6 GPUs (indices 0-5)"},
	}})
}

func TestProbeOldDriverSymbols(t *testing.T) {
	// Calling a function that the loaded libnvidia-ml.so lacks would kill
	// the process, so Probe asks first and does without.
	missing := func(names ...string) func(string) error {
		return func(name string) error {
			for _, n := range names {
				if n == name {
					return errors.New("undefined symbol: " + name)
				}
			}
			return nil
		}
	}
	t.Run("no MIG API", func(t *testing.T) {
		s := newDGX(t)
		s.LookupSymbolFunc = missing("nvmlDeviceGetMigMode")
		enableMIG(dev(s, 0), migA)
		snap := probeDGX(t, s)
		assert.False(t, snap.GPUs[0].MIGEnabled)
		assert.Empty(t, dev(s, 0).GetMigModeCalls(), "GetMigMode is not called")
	})
	t.Run("no remote device type API", func(t *testing.T) {
		s := newDGX(t)
		s.LookupSymbolFunc = missing("nvmlDeviceGetNvLinkRemoteDeviceType")
		setDirectNVLinks(dev(s, 0), map[int]int{1: 2})
		setDirectNVLinks(dev(s, 1), map[int]int{0: 2})
		snap := probeDGX(t, s)
		assert.Equal(t, NVLink(2), snap.Links[0][1], "direct links still count")
		assert.Equal(t, LinkPXB, snap.Links[2][3], "switch links cannot be told apart: PCIe level")
		assert.Equal(t, LinkSYS, snap.Links[2][7])
		for i := range 8 {
			assert.Empty(t, dev(s, i).GetNvLinkRemoteDeviceTypeCalls(), "GPU %d", i)
		}
	})
}

func TestProbeMIGNotSupportedIsOff(t *testing.T) {
	s := newDGX(t)
	for i := range 8 {
		dev(s, i).GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED }
	}
	snap := probeDGX(t, s)
	for _, g := range snap.GPUs {
		assert.False(t, g.MIGEnabled, "GPU %d", g.Index)
	}
}

func TestProbeUnavailable(t *testing.T) {
	tests := []struct {
		ret  nvml.Return
		want string
	}{
		{nvml.ERROR_LIBRARY_NOT_FOUND, "NVML is unavailable: libnvidia-ml.so.1 could not be loaded; is the NVIDIA driver installed?"},
		{nvml.ERROR_DRIVER_NOT_LOADED, "NVML is unavailable: the NVIDIA kernel driver is not loaded"},
		{nvml.ERROR_LIB_RM_VERSION_MISMATCH, "NVML is unavailable: libnvidia-ml.so.1 and the loaded NVIDIA kernel driver are different versions"},
		{nvml.ERROR_NO_PERMISSION, "NVML is unavailable: no permission"},
		{nvml.ERROR_UNKNOWN, "NVML is unavailable: nvmlInit failed: ERROR_UNKNOWN"},
	}
	for _, tt := range tests {
		t.Run(tt.ret.Error(), func(t *testing.T) {
			t.Setenv(LibraryPathEnv, "")
			s := newDGX(t)
			s.InitFunc = func() nvml.Return { return tt.ret }
			snap, err := probeWith(s)
			require.Error(t, err)
			assert.Nil(t, snap)
			assert.True(t, IsUnavailable(err))
			assert.ErrorIs(t, err, tt.ret)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.Empty(t, s.DeviceGetCountCalls(), "nothing is asked of an NVML that did not start")
			assert.Empty(t, s.ShutdownCalls(), "no Shutdown without a successful Init")
		})
	}
}

func TestProbeUnavailableNamesLibraryPath(t *testing.T) {
	t.Setenv(LibraryPathEnv, "/opt/nvidia/libnvidia-ml.so")
	err := initError(nvml.ERROR_LIBRARY_NOT_FOUND)
	assert.EqualError(t, err, "NVML is unavailable: /opt/nvidia/libnvidia-ml.so (from MIMOPLAN_NVML_LIBRARY) could not be loaded; is the NVIDIA driver installed?")
}

func TestProbeFailures(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *dgxa100.Server)
		want   string
	}{
		{"driver version", func(s *dgxa100.Server) {
			s.SystemGetDriverVersionFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
		}, "NVML: get driver version: ERROR_UNKNOWN"},
		{"CUDA driver version", func(s *dgxa100.Server) {
			s.SystemGetCudaDriverVersionFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_FUNCTION_NOT_FOUND }
		}, "NVML: get CUDA driver version: ERROR_FUNCTION_NOT_FOUND"},
		{"device count", func(s *dgxa100.Server) {
			s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		}, "NVML: count devices: ERROR_UNKNOWN"},
		{"device handle", func(s *dgxa100.Server) {
			s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
				if i == 3 {
					return nil, nvml.ERROR_GPU_IS_LOST
				}
				return s.Devices[i], nvml.SUCCESS
			}
		}, "NVML: GPU 3: get handle: ERROR_GPU_IS_LOST"},
		{"name", func(s *dgxa100.Server) {
			dev(s, 1).GetNameFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
		}, "NVML: GPU 1: get name: ERROR_UNKNOWN"},
		{"UUID", func(s *dgxa100.Server) {
			dev(s, 2).GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
		}, "NVML: GPU 2: get UUID: ERROR_UNKNOWN"},
		{"PCI info", func(s *dgxa100.Server) {
			dev(s, 0).GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, nvml.ERROR_UNKNOWN }
		}, "NVML: GPU 0: get PCI info: ERROR_UNKNOWN"},
		{"memory", func(s *dgxa100.Server) {
			dev(s, 4).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
		}, "NVML: GPU 4: get memory info: ERROR_GPU_IS_LOST"},
		{"compute capability", func(s *dgxa100.Server) {
			dev(s, 5).GetCudaComputeCapabilityFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_UNKNOWN }
		}, "NVML: GPU 5: get compute capability: ERROR_UNKNOWN"},
		{"MIG mode", func(s *dgxa100.Server) {
			dev(s, 6).GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NO_PERMISSION }
		}, "NVML: GPU 6: get MIG mode: ERROR_NO_PERMISSION"},
		{"MIG device count", func(s *dgxa100.Server) {
			enableMIG(dev(s, 7))
			dev(s, 7).GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		}, "NVML: GPU 7: get max MIG device count: ERROR_UNKNOWN"},
		{"MIG device handle", func(s *dgxa100.Server) {
			enableMIG(dev(s, 7))
			dev(s, 7).GetMigDeviceHandleByIndexFunc = func(int) (nvml.Device, nvml.Return) { return nil, nvml.ERROR_UNKNOWN }
		}, "NVML: GPU 7: get MIG device 0: ERROR_UNKNOWN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newDGX(t)
			tt.mutate(s)
			snap, err := probeWith(s)
			assert.Nil(t, snap)
			require.EqualError(t, err, tt.want)
			assert.False(t, IsUnavailable(err), "a failing query is not a missing driver")
			assert.Len(t, s.ShutdownCalls(), 1, "NVML is shut down after a failed probe too")
		})
	}
}
