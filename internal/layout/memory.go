package layout

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/diag"
)

// memoryText is a size with a unit, such as 80GiB, 79.6 GiB or 81559MiB.
var memoryText = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?) ?(TiB|GiB|MiB|TB|GB|MB)$`)

var memoryUnits = map[string]float64{
	"TiB": 1 << 40, "GiB": 1 << 30, "MiB": 1 << 20, "TB": 1e12, "GB": 1e9, "MB": 1e6,
}

// maxGPUMemory bounds gpu_memory at 64 TiB, far above any GPU.
const maxGPUMemory = 64 << 40

func (p *parser) gpuMemory(f field) {
	v := resolve(f.value)
	hint := "a size with its unit, such as 80GiB, 141GB or 81559MiB"
	var m []string
	if v.Kind == yaml.ScalarNode {
		m = memoryText.FindStringSubmatch(v.Value)
	}
	if m == nil {
		if v.Kind == yaml.ScalarNode && v.Tag == "!!int" {
			hint = "add the unit: " + v.Value + "GiB, " + v.Value + "GB or " + v.Value + "MiB"
		}
		p.d.Add(diag.RuleInvalidValue, nodePos(v), "", hint, "cluster.gpu_memory must be a size such as 80GiB, got %s", describe(v))
		return
	}
	x, err := strconv.ParseFloat(m[1], 64)
	b := x * memoryUnits[m[2]]
	if err != nil || b < 1<<20 || b > maxGPUMemory || math.IsNaN(b) {
		p.d.Add(diag.RuleInvalidValue, nodePos(v), "", hint, "cluster.gpu_memory must be between 1MiB and 64TiB, got %s", clip(v.Value))
		return
	}
	p.l.GPUMemory = int64(b)
}

// ParseSize reads a size written as gpu_memory is (80GiB, 141GB,
// 81559MiB) or 0, in bytes.
func ParseSize(text string) (float64, error) {
	if text == "0" {
		return 0, nil
	}
	m := memoryText.FindStringSubmatch(text)
	if m == nil {
		return 0, fmt.Errorf("want a size such as 4GiB, 4.5GB or 4096MiB, or 0, got %q", text)
	}
	x, err := strconv.ParseFloat(m[1], 64)
	if err != nil || x*memoryUnits[m[2]] > maxGPUMemory {
		return 0, fmt.Errorf("want a size up to 64TiB, got %q", text)
	}
	return x * memoryUnits[m[2]], nil
}

// readFile reads a file the layout names, refusing what is not a regular
// file or is larger than limit.
func (p *parser) readFile(path string, limit int64) ([]byte, error) {
	if p.read != nil {
		return p.read(path, limit)
	}
	f, err := OpenRegular(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("cannot read %s: %w", path, pe.Err)
		}
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}
