package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// megatronFigures reads a file of configurations with Megatron's figures
// under each one's megatron_theory (scripts/measure-memory.py writes them).
func megatronFigures(t *testing.T, path string) map[string][2]float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc struct {
		Configs map[string]json.RawMessage `json:"configs"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	out := map[string][2]float64{}
	for name, raw := range doc.Configs {
		var c struct {
			Weight     float64 `json:"weight_and_optimizer_bytes"`
			Activation float64 `json:"activation_bytes"`
			Theory     *struct {
				Weight     float64 `json:"weight_and_optimizer_bytes"`
				Activation float64 `json:"activation_bytes"`
			} `json:"megatron_theory"`
		}
		require.NoError(t, json.Unmarshal(raw, &c), name)
		if c.Theory != nil {
			c.Weight, c.Activation = c.Theory.Weight, c.Theory.Activation
		}
		require.Positive(t, c.Weight, name)
		out[name] = [2]float64{c.Weight, c.Activation}
	}
	return out
}

// The layouts of the measured configurations (testdata/measured, written by
// scripts/measure-memory.py --layout) estimate to the Megatron figures that
// theoretical_memory_usage.py gives for the same arguments: on the GPU
// machine for the runs kept in internal/model/testdata/measured, and here
// for every configuration, the two-GPU ones too
// (testdata/measured/megatron-theory.json, scripts/measure-memory.py
// --theory). So docs/estimate.md's tables are what `mimoplan estimate` prints.
// A MIMO configuration (an encoder beside the language model) is held to
// the language model's figure, the one Megatron's formula can take.
func TestEstimateMeasuredLayouts(t *testing.T) {
	onDevice := megatronFigures(t, "../../internal/model/testdata/measured/h100-x1.json")
	here := megatronFigures(t, "../../testdata/measured/megatron-theory.json")
	layouts, err := filepath.Glob("../../testdata/measured/*.yaml")
	require.NoError(t, err)
	require.Len(t, layouts, len(here), "a layout for every configuration")
	for _, path := range layouts {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			code, out, errOut := mimoplan(t, "estimate", "--format", "json", path)
			require.Equal(t, 0, code, errOut)
			var doc struct {
				Modules []struct {
					Name     string `json:"name"`
					Megatron struct {
						Weight     float64 `json:"weight_and_optimizer_bytes"`
						Activation float64 `json:"activation_bytes"`
					} `json:"megatron"`
					OverheadBytes int64 `json:"overhead_bytes"`
				} `json:"modules"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &doc))
			require.NotEmpty(t, doc.Modules)
			lm := len(doc.Modules) - 1
			for i, m := range doc.Modules {
				assert.Positive(t, m.OverheadBytes, m.Name)
				if m.Name == "language" {
					lm = i
				}
			}
			require.Equal(t, "language", doc.Modules[lm].Name)
			got := doc.Modules[lm].Megatron
			for _, want := range [][2]float64{here[name], onDevice[name]} {
				if want[0] == 0 {
					continue // not measured (two GPUs)
				}
				assert.InEpsilon(t, want[0], got.Weight, 1e-12)
				assert.InEpsilon(t, want[1], got.Activation, 1e-12)
			}
		})
	}
	for name := range onDevice {
		assert.Contains(t, here, name)
	}
}
