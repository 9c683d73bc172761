//go:build cgo

package gpuprobe

import (
	"fmt"
	"os"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Library is the part of NVML that Probe uses. nvml.New() satisfies it,
// and so do go-nvml's mocks (pkg/nvml/mock, pkg/nvml/mock/dgxa100), which
// is how the tests run without a GPU.
type Library interface {
	Init() nvml.Return
	Shutdown() nvml.Return
	SystemGetDriverVersion() (string, nvml.Return)
	SystemGetCudaDriverVersion() (int, nvml.Return)
	DeviceGetCount() (int, nvml.Return)
	DeviceGetHandleByIndex(index int) (nvml.Device, nvml.Return)
}

// LibraryPathEnv names a libnvidia-ml.so to load instead of the default
// libnvidia-ml.so.1 found through the dynamic loader's search path.
const LibraryPathEnv = "MIMOPLAN_NVML_LIBRARY"

// NewLibrary returns the real NVML. Nothing is loaded until Init, so this
// works on machines without a driver.
func NewLibrary() Library {
	if p := os.Getenv(LibraryPathEnv); p != "" {
		return nvml.New(nvml.WithLibraryPath(p))
	}
	return nvml.New()
}

// ProbeLocal initialises NVML, takes a snapshot of this machine's GPUs
// and shuts NVML down again. Without a usable NVML it returns an
// *UnavailableError.
func ProbeLocal() (*Snapshot, error) {
	return probeWith(NewLibrary())
}

// probeWith is Init, Probe, Shutdown.
func probeWith(lib Library) (*Snapshot, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, initError(ret)
	}
	// A failed Shutdown after a good probe changes nothing for the caller.
	defer lib.Shutdown() //nolint:errcheck
	return Probe(lib)
}

// initError explains a failed nvml.Init in one line.
func initError(ret nvml.Return) error {
	var reason string
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		name := "libnvidia-ml.so.1"
		if p := os.Getenv(LibraryPathEnv); p != "" {
			name = p + " (from " + LibraryPathEnv + ")"
		}
		reason = name + " could not be loaded; is the NVIDIA driver installed?"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		reason = "the NVIDIA kernel driver is not loaded (no /dev/nvidia* devices?)"
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		reason = "libnvidia-ml.so.1 and the loaded NVIDIA kernel driver are different versions; reboot or reload the driver"
	case nvml.ERROR_NO_PERMISSION:
		reason = "no permission to open the NVIDIA devices (/dev/nvidia*)"
	default:
		reason = "nvmlInit failed: " + ret.Error()
	}
	return &UnavailableError{Reason: reason, Err: ret}
}

// Probe reads the driver, every GPU and the links between them. lib must
// already be initialised.
func Probe(lib Library) (*Snapshot, error) {
	driver, ret := lib.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML: get driver version: %w", ret)
	}
	cuda, ret := lib.SystemGetCudaDriverVersion()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML: get CUDA driver version: %w", ret)
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML: count devices: %w", ret)
	}
	s := &Snapshot{
		DriverVersion:     driver,
		CUDADriverVersion: formatCUDAVersion(cuda),
		GPUs:              make([]GPU, 0, n),
	}
	has := symbols(lib)
	devs := make([]nvml.Device, 0, n)
	for i := range n {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret == nvml.ERROR_NO_PERMISSION {
			// A GPU outside this job's device cgroup (Slurm's
			// ConstrainDevices, a container): CUDA cannot use it either.
			s.Inaccessible = append(s.Inaccessible, i)
			continue
		}
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML: GPU %d: get handle: %w", i, ret)
		}
		g, err := readGPU(i, d, has("nvmlDeviceGetMigMode"))
		if err != nil {
			return nil, fmt.Errorf("NVML: GPU %d: %w", i, err)
		}
		devs = append(devs, d)
		s.GPUs = append(s.GPUs, g)
	}
	s.Links = links(devs, has("nvmlDeviceGetNvLinkRemoteDeviceType"))
	return s, nil
}

// symbols returns a test for whether the loaded libnvidia-ml.so has a
// function. go-nvml calls NVML through symbols resolved at call time, so
// calling one that an old driver lacks would kill the process; the few
// calls newer than the oldest drivers still in use are checked first. A
// Library that cannot say (no Extensions method) is taken to have all.
func symbols(lib Library) func(name string) bool {
	ext, ok := lib.(interface{ Extensions() nvml.ExtendedInterface })
	if !ok {
		return func(string) bool { return true }
	}
	e := ext.Extensions()
	return func(name string) bool { return e.LookupSymbol(name) == nil }
}

// readGPU reads one GPU; hasMIG says whether the driver knows MIG (R450
// and later).
func readGPU(index int, d nvml.Device, hasMIG bool) (GPU, error) {
	g := GPU{Index: index, MIGDevices: []string{}}
	var ret nvml.Return
	if g.Name, ret = d.GetName(); ret != nvml.SUCCESS {
		return g, fmt.Errorf("get name: %w", ret)
	}
	if g.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
		return g, fmt.Errorf("get UUID: %w", ret)
	}
	pci, ret := d.GetPciInfo()
	if ret != nvml.SUCCESS {
		return g, fmt.Errorf("get PCI info: %w", ret)
	}
	g.PCIBusID = busID(pci)
	mem, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return g, fmt.Errorf("get memory info: %w", ret)
	}
	g.MemoryBytes = mem.Total
	major, minor, ret := d.GetCudaComputeCapability()
	if ret != nvml.SUCCESS {
		return g, fmt.Errorf("get compute capability: %w", ret)
	}
	g.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)

	if !hasMIG {
		return g, nil // a driver without MIG: MIG is off
	}
	current, _, ret := d.GetMigMode()
	switch ret {
	case nvml.SUCCESS:
		g.MIGEnabled = current == nvml.DEVICE_MIG_ENABLE
	case nvml.ERROR_NOT_SUPPORTED:
		// Not a MIG-capable GPU: MIG is off.
	default:
		return g, fmt.Errorf("get MIG mode: %w", ret)
	}
	if g.MIGEnabled {
		migs, err := migDevices(d)
		if err != nil {
			return g, err
		}
		g.MIGDevices = migs
	}
	return g, nil
}

// migDevices lists the UUIDs of the MIG devices that exist on d.
func migDevices(d nvml.Device) ([]string, error) {
	slots, ret := d.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("get max MIG device count: %w", ret)
	}
	out := []string{}
	for k := range slots {
		m, ret := d.GetMigDeviceHandleByIndex(k)
		if ret == nvml.ERROR_NOT_FOUND || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue // an empty slot
		}
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("get MIG device %d: %w", k, ret)
		}
		uuid, ret := m.GetUUID()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("get UUID of MIG device %d: %w", k, ret)
		}
		out = append(out, uuid)
	}
	return out, nil
}

// busID is the PCI bus id as nvidia-smi prints it, in lower case. NVML
// fills BusId; the numeric fields are the fallback.
func busID(p nvml.PciInfo) string {
	if s := cString(p.BusId[:]); s != "" {
		return strings.ToLower(s)
	}
	if s := cString(p.BusIdLegacy[:]); s != "" {
		return strings.ToLower(s)
	}
	if p.Domain == 0 && p.Bus == 0 && p.Device == 0 {
		return ""
	}
	return fmt.Sprintf("%08x:%02x:%02x.0", p.Domain, p.Bus, p.Device)
}

// busKey normalises a PCI address for comparison: NVML writes the domain
// with 8 digits in some places and 4 in others.
func busKey(p nvml.PciInfo) string {
	if p.Domain != 0 || p.Bus != 0 || p.Device != 0 {
		return fmt.Sprintf("%x:%x:%x", p.Domain, p.Bus, p.Device)
	}
	var domain, bus, dev, fn uint32
	if _, err := fmt.Sscanf(busID(p), "%x:%x:%x.%x", &domain, &bus, &dev, &fn); err != nil {
		return ""
	}
	return fmt.Sprintf("%x:%x:%x", domain, bus, dev)
}

func cString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

// links builds the topology matrix. A pair joined by NVLink is NV<n>, n
// being the links between them: direct GPU-to-GPU links, or, on NVSwitch
// systems, the smaller of the two GPUs' counts of links to the switches
// (every GPU reaches every other at full width there). Other pairs take
// the PCIe level of their common ancestor. What NVML cannot answer is
// LinkUnknown: the links are for reading, and none of the rules needs them.
//
// hasRemoteType says whether the driver can tell a switch from a GPU at
// the far end of a link; without it (older drivers), only links
// whose far end is a GPU of this machine count.
func links(devs []nvml.Device, hasRemoteType bool) [][]Link {
	n := len(devs)
	byBus := map[string]int{}
	for i, d := range devs {
		if pci, ret := d.GetPciInfo(); ret == nvml.SUCCESS {
			if k := busKey(pci); k != "" {
				byBus[k] = i
			}
		}
	}
	direct := make([][]int, n)
	toSwitch := make([]int, n)
	for i, d := range devs {
		direct[i] = make([]int, n)
		for link := range nvml.NVLINK_MAX_LINKS {
			state, ret := d.GetNvLinkState(link)
			if ret != nvml.SUCCESS || state != nvml.FEATURE_ENABLED {
				// NOT_SUPPORTED (no NVLink), INVALID_ARGUMENT (no such
				// link) or a link that is down.
				continue
			}
			if hasRemoteType {
				if typ, ret := d.GetNvLinkRemoteDeviceType(link); ret == nvml.SUCCESS && typ == nvml.NVLINK_DEVICE_TYPE_SWITCH {
					toSwitch[i]++
					continue
				}
			}
			pci, ret := d.GetNvLinkRemotePciInfo(link)
			if ret != nvml.SUCCESS {
				continue
			}
			if j, ok := byBus[busKey(pci)]; ok && j != i {
				direct[i][j]++
			}
		}
	}

	m := make([][]Link, n)
	for i := range m {
		m[i] = make([]Link, n)
		m[i][i] = LinkSelf
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			l := LinkUnknown
			nv := max(direct[i][j], direct[j][i])
			if nv == 0 && toSwitch[i] > 0 && toSwitch[j] > 0 {
				nv = min(toSwitch[i], toSwitch[j])
			}
			if nv > 0 {
				l = NVLink(nv)
			} else if level, ret := devs[i].GetTopologyCommonAncestor(devs[j]); ret == nvml.SUCCESS {
				l = pcieLink(level)
			}
			m[i][j], m[j][i] = l, l
		}
	}
	return m
}

// pcieLink maps NVML's topology level to nvidia-smi's code.
func pcieLink(level nvml.GpuTopologyLevel) Link {
	switch level {
	case nvml.TOPOLOGY_INTERNAL:
		return LinkSelf
	case nvml.TOPOLOGY_SINGLE:
		return LinkPIX
	case nvml.TOPOLOGY_MULTIPLE:
		return LinkPXB
	case nvml.TOPOLOGY_HOSTBRIDGE:
		return LinkPHB
	case nvml.TOPOLOGY_NODE:
		return LinkNODE
	case nvml.TOPOLOGY_SYSTEM:
		return LinkSYS
	}
	return LinkUnknown
}
