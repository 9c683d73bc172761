//go:build cgo

package gpuprobe

import (
	"fmt"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/require"
)

// dgxBuses are the PCI buses of a DGX A100's GPUs, in NVML order.
var dgxBuses = [8]uint32{0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD}

// testUUID is GPU i's UUID: "GPU-<i>..." so that "GPU-<i>" is a unique
// prefix.
func testUUID(i int) string {
	return fmt.Sprintf("GPU-%d%07x-1111-2222-3333-%012x", i, i, i)
}

// newDGX returns go-nvml's DGX A100 mock, made deterministic and completed
// with what Probe asks that the stock mock leaves out: PCI bus ids, 12
// NVLinks per GPU to the NVSwitches, PCIe topology (pairs behind one
// switch, halves on one socket) and MIG device enumeration.
func newDGX(t *testing.T) *dgxa100.Server {
	t.Helper()
	s := dgxa100.New()
	for i, d := range s.Devices {
		dev := d.(*dgxa100.Device)
		dev.UUID = testUUID(i)
		dev.PciBusID = fmt.Sprintf("00000000:%02X:00.0", dgxBuses[i])
		bus := dgxBuses[i]
		dev.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
			p := nvml.PciInfo{Domain: 0, Bus: bus, Device: 0, PciDeviceId: 0x20B010DE}
			copy(p.BusId[:], cChars(dev.PciBusID))
			return p, nvml.SUCCESS
		}
		setNVSwitch(dev, 12)
		dev.GetTopologyCommonAncestorFunc = func(other nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
			j := other.(*dgxa100.Device).Index
			switch {
			case i == j:
				return nvml.TOPOLOGY_INTERNAL, nvml.SUCCESS
			case i/2 == j/2:
				return nvml.TOPOLOGY_MULTIPLE, nvml.SUCCESS
			case i/4 == j/4:
				return nvml.TOPOLOGY_NODE, nvml.SUCCESS
			}
			return nvml.TOPOLOGY_SYSTEM, nvml.SUCCESS
		}
		dev.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
		dev.GetMigDeviceHandleByIndexFunc = func(k int) (nvml.Device, nvml.Return) {
			return nil, nvml.ERROR_NOT_FOUND
		}
	}
	return s
}

// setNVSwitch gives dev n active NVLinks, all to NVSwitches.
func setNVSwitch(dev *dgxa100.Device, n int) {
	dev.GetNvLinkStateFunc = func(link int) (nvml.EnableState, nvml.Return) {
		if link >= n {
			return nvml.FEATURE_DISABLED, nvml.ERROR_INVALID_ARGUMENT
		}
		return nvml.FEATURE_ENABLED, nvml.SUCCESS
	}
	dev.GetNvLinkRemoteDeviceTypeFunc = func(link int) (nvml.IntNvLinkDeviceType, nvml.Return) {
		return nvml.NVLINK_DEVICE_TYPE_SWITCH, nvml.SUCCESS
	}
	dev.GetNvLinkRemotePciInfoFunc = func(link int) (nvml.PciInfo, nvml.Return) {
		return nvml.PciInfo{Bus: 0xC0 + uint32(link/2)}, nvml.SUCCESS
	}
}

// setNoNVLink makes dev a PCIe-only GPU.
func setNoNVLink(dev *dgxa100.Device) {
	dev.GetNvLinkStateFunc = func(int) (nvml.EnableState, nvml.Return) {
		return nvml.FEATURE_DISABLED, nvml.ERROR_NOT_SUPPORTED
	}
	dev.GetNvLinkRemoteDeviceTypeFunc = func(int) (nvml.IntNvLinkDeviceType, nvml.Return) {
		return nvml.NVLINK_DEVICE_TYPE_UNKNOWN, nvml.ERROR_NOT_SUPPORTED
	}
	dev.GetNvLinkRemotePciInfoFunc = func(int) (nvml.PciInfo, nvml.Return) {
		return nvml.PciInfo{}, nvml.ERROR_NOT_SUPPORTED
	}
}

// setDirectNVLinks wires peers[k] = number of links from dev to GPU k,
// GPU-to-GPU without a switch, as NVLink bridges do. The remote device
// type query fails, as it does on older drivers, so the remote PCI
// address decides.
func setDirectNVLinks(dev *dgxa100.Device, peers map[int]int) {
	var remote []uint32 // bus of the peer of each link
	for k := range 8 {
		for range peers[k] {
			remote = append(remote, dgxBuses[k])
		}
	}
	dev.GetNvLinkStateFunc = func(link int) (nvml.EnableState, nvml.Return) {
		if link >= len(remote) {
			return nvml.FEATURE_DISABLED, nvml.ERROR_INVALID_ARGUMENT
		}
		return nvml.FEATURE_ENABLED, nvml.SUCCESS
	}
	dev.GetNvLinkRemoteDeviceTypeFunc = func(int) (nvml.IntNvLinkDeviceType, nvml.Return) {
		return nvml.NVLINK_DEVICE_TYPE_UNKNOWN, nvml.ERROR_FUNCTION_NOT_FOUND
	}
	dev.GetNvLinkRemotePciInfoFunc = func(link int) (nvml.PciInfo, nvml.Return) {
		// Only the 4-digit-domain string, as some drivers write it.
		p := nvml.PciInfo{}
		copy(p.BusId[:], cChars(fmt.Sprintf("0000:%02x:00.0", remote[link])))
		return p, nvml.SUCCESS
	}
}

// enableMIG turns MIG on for dev with the given MIG device UUIDs.
func enableMIG(dev *dgxa100.Device, uuids ...string) {
	dev.MigMode = nvml.DEVICE_MIG_ENABLE
	dev.GetMigDeviceHandleByIndexFunc = func(k int) (nvml.Device, nvml.Return) {
		if k >= len(uuids) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		uuid := uuids[k]
		return &mock.Device{GetUUIDFunc: func() (string, nvml.Return) { return uuid, nvml.SUCCESS }}, nvml.SUCCESS
	}
}

func dev(s *dgxa100.Server, i int) *dgxa100.Device { return s.Devices[i].(*dgxa100.Device) }

func cChars(s string) []int8 {
	out := make([]int8, len(s))
	for i := range len(s) {
		out[i] = int8(s[i])
	}
	return out
}

// probeDGX probes a mock through the same Init/Probe/Shutdown path as
// ProbeLocal and fails the test on error.
func probeDGX(t *testing.T, s *dgxa100.Server) *Snapshot {
	t.Helper()
	snap, err := probeWith(s)
	require.NoError(t, err)
	return snap
}
