package testutil

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// CalRow is one published run of testdata/calibration/published.yaml.
type CalRow struct {
	ID        string         `yaml:"id"`
	Set       string         `yaml:"set"`
	Source    string         `yaml:"source"`
	Settings  string         `yaml:"settings"`
	GPU       string         `yaml:"gpu"`
	GPUs      int            `yaml:"gpus"`
	Precision string         `yaml:"precision"`
	Model     map[string]any `yaml:"model"`
	Batch     map[string]int `yaml:"batch"`
	Sizes     map[string]int `yaml:"sizes"`
	// Split is the recipe's uneven pipeline split, module keys as the
	// layout writes them (account_for_*, pipeline_model_parallel_layout).
	Split    map[string]any `yaml:"split"`
	Training map[string]any `yaml:"training"`
	Measured map[string]any `yaml:"measured"`
	Assumed  string         `yaml:"assumed"`
	// Unpublished are sizes the source does not give: their value is an
	// assumption, left open where suggest is compared with the row.
	Unpublished []string `yaml:"unpublished"`
}

// IsPublished reports whether the row's source gives size k.
func (r CalRow) IsPublished(k string) bool {
	for _, u := range r.Unpublished {
		if u == k {
			return false
		}
	}
	return true
}

// Calibration is the file: the settings each source's rows share, the
// models rows refer to, and the rows.
type Calibration struct {
	Common map[string]map[string]any `yaml:"common"`
	Models map[string]map[string]any `yaml:"models"`
	Rows   []CalRow                  `yaml:"rows"`
}

// LoadCalibration reads testdata/calibration/published.yaml.
func LoadCalibration(tb testing.TB) *Calibration {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "testdata", "calibration", "published.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	var f Calibration
	if err := yaml.Unmarshal(data, &f); err != nil {
		tb.Fatal(err)
	}
	return &f
}

// GPUsPerNode are the nodes the rows ran on (DGX A100, H100 and B200).
const GPUsPerNode = 8

// Layout is row r as a layout (target core), its sizes fixed; with open,
// as a spec that leaves the module's span and sizes to the planner. A
// GPU's memory is gpuMemory (a layout size, e.g. 80GiB).
func (f *Calibration) Layout(r CalRow, open bool, gpuMemory string) ([]byte, error) {
	mdl := r.Model
	if ref, ok := mdl["ref"].(string); ok {
		mdl = f.Models[ref]
	}
	train := map[string]any{}
	for k, v := range f.Common[strings.Fields(r.Source)[0]] {
		train[k] = v
	}
	for k, v := range r.Training {
		train[k] = v
	}
	if r.Precision == "fp8" {
		train["fp8"] = "hybrid"
	}
	nodes, gpn := 1, r.GPUs
	if r.GPUs > GPUsPerNode {
		nodes, gpn = r.GPUs/GPUsPerNode, GPUsPerNode
	}
	mod := map[string]any{"name": "language", "model": mdl}
	if !open {
		mod["num_ranks"], mod["rank_offset"] = r.GPUs, 0
		_, staged := r.Split["pipeline_model_parallel_layout"]
		for k, v := range r.Sizes {
			// A pipeline layout states the virtual stages itself.
			if r.IsPublished(k) && !(staged && k == "vpp") {
				mod[k] = v
			}
		}
		for k, v := range r.Split {
			mod[k] = v
		}
	}
	cluster := map[string]any{"nodes": nodes, "gpus_per_node": gpn}
	if gpuMemory != "" {
		cluster["gpu_memory"] = gpuMemory
	}
	doc := map[string]any{
		"version": 1, "target": "core", "cluster": cluster,
		"batch": r.Batch, "training": train, "modules": []any{mod},
	}
	return yaml.Marshal(doc)
}

// DP is the row's data-parallel size.
func (r CalRow) DP() int { return r.GPUs / (r.Sizes["tp"] * r.Sizes["cp"] * r.Sizes["pp"]) }

// MeasuredStep is the published figure as seconds per global batch of a
// model of seq tokens, layers layers, hidden h and padded vocabulary v
// (published.yaml's header gives the formulas); a published step
// (step_s) is that figure itself.
func (r CalRow) MeasuredStep(seq, layers, h, v int) (float64, error) {
	if x, ok := r.Measured["step_s"]; ok {
		return num(x), nil
	}
	g := float64(r.Batch["global_batch_size"])
	if x, ok := r.Measured["tokens_per_s_per_gpu"]; ok {
		return g * float64(seq) / (num(x) * float64(r.GPUs)), nil
	}
	tf := num(r.Measured["tflops_per_gpu"]) * 1e12
	s, l, hh, vv := float64(seq), float64(layers), float64(h), float64(v)
	var f float64
	switch r.Measured["formula"] {
	case "sc21":
		f = 96 * s * l * hh * hh * (1 + s/(6*hh) + vv/(16*l*hh))
	case "megatron-r0.8":
		f = 72 * s * l * hh * hh * (1 + s/(6*hh) + vv/(12*l*hh))
	default:
		return 0, fmt.Errorf("%s: unknown formula %v", r.ID, r.Measured["formula"])
	}
	return f * g / (float64(r.GPUs) * tf), nil
}

func num(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

var updateDocs = flag.Bool("update-docs", false, "rewrite the doc tables the tests hold (CheckDocTable)")

// CheckDocTable holds the table between the markers named name in doc (a
// path from the repository's root) to table; with -update-docs it
// rewrites it.
func CheckDocTable(tb testing.TB, doc, name, table string) {
	tb.Helper()
	begin := "<!-- " + name + ": written by the tests (go test ... -update-docs) -->\n"
	end := "<!-- end of " + name + " -->\n"
	path := filepath.Join(RepoRoot(), doc)
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	text := string(data)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		tb.Fatalf("%s: no markers %q", doc, begin)
	}
	want := text[:i+len(begin)] + table + text[j:]
	if *updateDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	if want != text {
		tb.Errorf("%s: the %s table is not what the tests compute; rerun them with -update-docs", doc, name)
	}
}
