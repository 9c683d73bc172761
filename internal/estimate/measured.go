package estimate

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// Measured is what a GPU held for one module in a measured run: the
// busiest rank's nvidia-smi used memory and PyTorch's peak allocation.
type Measured struct {
	SMIBytes       float64 `json:"smi_bytes"`
	AllocatedBytes float64 `json:"allocated_bytes"`
}

// ReadMeasured reads the run named config from a measured results file
// (testdata/measured/README.md: {"configs": {NAME: {"ranks": [...]}}}) and
// returns each module's busiest rank; a run of one model is "language".
func ReadMeasured(r io.Reader, config string) (map[string]Measured, error) {
	var doc struct {
		Configs map[string]struct {
			Ranks []struct {
				Module       string  `json:"module"`
				MaxAllocated float64 `json:"max_allocated"`
				SMI          struct {
					ProcessUsedMiB float64 `json:"process_used_mib"`
				} `json:"smi_after_last_step"`
			} `json:"ranks"`
		} `json:"configs"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("reading measured runs: %w", err)
	}
	run, ok := doc.Configs[config]
	if !ok || len(run.Ranks) == 0 {
		names := make([]string, 0, len(doc.Configs))
		for n := range doc.Configs {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("no measured run named %q (the file has %d: %v)", config, len(names), names)
	}
	out := map[string]Measured{}
	for _, k := range run.Ranks {
		name := k.Module
		if name == "" {
			name = "language"
		}
		m := out[name]
		m.SMIBytes = max(m.SMIBytes, k.SMI.ProcessUsedMiB*(1<<20))
		m.AllocatedBytes = max(m.AllocatedBytes, k.MaxAllocated)
		out[name] = m
	}
	return out, nil
}
