//go:build !cgo

package gpuprobe

// LibraryPathEnv names a libnvidia-ml.so to load instead of the default
// libnvidia-ml.so.1 (unused in a build without cgo).
const LibraryPathEnv = "MIMOPLAN_NVML_LIBRARY"

// errNoCgo is what a binary built with CGO_ENABLED=0 says: go-nvml loads
// libnvidia-ml.so.1 through cgo, so such a binary cannot reach NVML.
var errNoCgo = &UnavailableError{Reason: "this mimoplan was built without cgo (CGO_ENABLED=0), which NVML needs; rebuild with CGO_ENABLED=1"}

// ProbeLocal always fails in a build without cgo.
func ProbeLocal() (*Snapshot, error) { return nil, errNoCgo }
