// Package gpuprobe inspects the GPUs of the local machine through NVML and
// checks them against a layout's expectations of one node.
//
// The NVML side (Probe, ProbeLocal) needs cgo; everything else
// (Snapshot, Check, the writers) is plain Go, so that the rules can be
// tested and reused without a driver.
package gpuprobe

import (
	"errors"
	"fmt"
	"strings"
)

// Snapshot is what NVML says about this machine at one moment.
type Snapshot struct {
	DriverVersion string `json:"driver_version"`
	// CUDADriverVersion is the highest CUDA version the driver supports,
	// as "major.minor" (NVML's 12040 is "12.4").
	CUDADriverVersion string `json:"cuda_driver_version"`
	// GPUs are the GPUs this process may use, in NVML index order (PCI bus
	// order). A GPU's position in the list is its CUDA device number when
	// CUDA_VISIBLE_DEVICES is unset.
	GPUs []GPU `json:"gpus"`
	// Links[i][j] is how GPUs[i] reaches GPUs[j], in nvidia-smi topo -m's
	// words; Links[i][i] is LinkSelf.
	Links [][]Link `json:"links"`
	// Inaccessible lists the NVML indices of GPUs that NVML counts but this
	// process may not open (outside its device cgroup, as under Slurm's
	// ConstrainDevices); CUDA does not see them either.
	Inaccessible []int `json:"inaccessible_gpus,omitempty"`
}

// GPU is one physical GPU.
type GPU struct {
	// Index is the NVML index, as nvidia-smi numbers the GPU.
	Index    int    `json:"index"`
	Name     string `json:"name"`
	UUID     string `json:"uuid"`
	PCIBusID string `json:"pci_bus_id"`
	// MemoryBytes is the total framebuffer memory.
	MemoryBytes uint64 `json:"memory_bytes"`
	// ComputeCapability is "major.minor", e.g. "9.0" for Hopper.
	ComputeCapability string `json:"compute_capability"`
	MIGEnabled        bool   `json:"mig_enabled"`
	// MIGDevices lists the UUIDs of the MIG devices carved out of this GPU
	// (empty unless MIG is enabled and instances exist).
	MIGDevices []string `json:"mig_devices"`
}

// Link is one cell of the topology matrix, spelled as nvidia-smi topo -m
// spells it: X, NV<n>, PIX, PXB, PHB, NODE, SYS, or LinkUnknown.
type Link string

const (
	// LinkSelf is the diagonal; NVML also reports it for two GPUs on one
	// board (TOPOLOGY_INTERNAL).
	LinkSelf Link = "X"
	// LinkPIX: at most a single PCIe bridge (same PCIe switch).
	LinkPIX Link = "PIX"
	// LinkPXB: several PCIe bridges, without a host bridge.
	LinkPXB Link = "PXB"
	// LinkPHB: through a PCIe host bridge (typically the CPU).
	LinkPHB Link = "PHB"
	// LinkNODE: between PCIe host bridges within one NUMA node.
	LinkNODE Link = "NODE"
	// LinkSYS: across the SMP interconnect between NUMA nodes (sockets).
	LinkSYS Link = "SYS"
	// LinkUnknown: NVML could not say.
	LinkUnknown Link = "?"
)

// NVLink returns the link of n bonded NVLinks, e.g. "NV12".
func NVLink(n int) Link { return Link(fmt.Sprintf("NV%d", n)) }

// IsNVLink reports whether l is an NVLink connection.
func (l Link) IsNVLink() bool { return strings.HasPrefix(string(l), "NV") }

// LinkLegend explains each code, in nvidia-smi's order.
var LinkLegend = []struct {
	Code    string
	Meaning string
}{
	{"X", "self (or two GPUs on one board)"},
	{"SYS", "PCIe plus the interconnect between NUMA nodes / CPU sockets (QPI/UPI)"},
	{"NODE", "PCIe plus the interconnect between PCIe host bridges within one NUMA node"},
	{"PHB", "PCIe through a PCIe host bridge (typically the CPU)"},
	{"PXB", "several PCIe bridges, without a PCIe host bridge"},
	{"PIX", "at most a single PCIe bridge (same PCIe switch)"},
	{"NV#", "a bonded set of # NVLinks (directly or through NVSwitch)"},
	{"?", "NVML could not tell"},
}

// UnavailableError says that NVML cannot be used on this machine: the
// library libnvidia-ml.so.1 is missing, the kernel driver is not loaded,
// or this binary was built without cgo. The CLI maps it to exit code 3.
type UnavailableError struct {
	// Reason is one line naming what is missing.
	Reason string
	// Err is the underlying NVML return code or other cause, if any.
	Err error
}

func (e *UnavailableError) Error() string {
	return "NVML is unavailable: " + e.Reason
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// IsUnavailable reports whether err (or an error it wraps) is an
// *UnavailableError.
func IsUnavailable(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u)
}

// formatCUDAVersion turns NVML's 12040 into "12.4".
func formatCUDAVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

// formatBytes prints memory as nvidia-smi users think of it: in GiB, with
// one decimal where the size is not whole.
func formatBytes(b uint64) string {
	const gib = 1 << 30
	if b%gib == 0 {
		return fmt.Sprintf("%d GiB", b/gib)
	}
	return fmt.Sprintf("%.1f GiB", float64(b)/gib)
}
