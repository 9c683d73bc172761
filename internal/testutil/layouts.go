package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Layout is the path of a file of layouts/, the example layouts.
func Layout(name string) string {
	return filepath.Join(RepoRoot(), "layouts", name)
}

// Layouts are the files of layouts/ that match pattern ("*.yaml" for
// all); none is a test failure.
func Layouts(tb testing.TB, pattern string) []string {
	tb.Helper()
	return glob(tb, filepath.Join(RepoRoot(), "layouts", pattern))
}

// GoldenLayouts are the golden layouts (GoldenDir) that match pattern;
// none is a test failure.
func GoldenLayouts(tb testing.TB, pattern string) []string {
	tb.Helper()
	return glob(tb, filepath.Join(GoldenDir(), "layouts", pattern))
}

func glob(tb testing.TB, pattern string) []string {
	tb.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatalf("no file matches %s", pattern)
	}
	return files
}

// AddLayoutSeeds adds to f's corpus the layouts a layout fuzz target
// starts from: layouts/, the golden layouts, testdata/demo and
// HostileInputs.
func AddLayoutSeeds(f *testing.F) {
	f.Helper()
	files := append(Layouts(f, "*.yaml"), GoldenLayouts(f, "*.yaml")...)
	files = append(files, glob(f, filepath.Join(RepoRoot(), "testdata", "demo", "*.yaml"))...)
	files = append(files, filepath.Join(RepoRoot(), "testdata", "launch", "moe-env.yaml")) // an env block
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, b := range HostileInputs() {
		f.Add(b)
	}
}

// HostileInputs are inputs a fuzzer takes long to find on its own: alias
// bombs, deep nesting, huge and odd integers, binary, YAML features a
// layout does not use, models at their limits.
func HostileInputs() map[string][]byte {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, c := range "bcdefghij" {
		bomb += string(c) + ": &" + string(c) + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n"
		prev = string(c)
	}
	return map[string][]byte{
		"empty":                 nil,
		"alias bomb":            []byte(bomb),
		"alias bomb in modules": []byte("version: 1\nworld_size: 8\nx: &m {name: language, num_ranks: 8}\nl: &l [*m, *m, *m, *m, *m, *m, *m, *m]\nmodules: [*l, *l, *l, *l]\n"),
		"deep lists":            []byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000)),
		"deep unclosed":         []byte(strings.Repeat("[", 20000)),
		"deep mappings":         []byte(strings.Repeat("{a: ", 5000) + "1" + strings.Repeat("}", 5000)),
		"huge ints":             []byte("version: 1\nworld_size: 99999999999999999999999999\ncluster: {nodes: 9223372036854775807, gpus_per_node: 9223372036854775807}\nbatch: {micro_batch_size: 2147483648, global_batch_size: -9223372036854775808}\nmodules:\n- {name: language, num_ranks: 0x7fffffffffffffff, tp: 1e400, dp: .inf}\n"),
		"binary":                []byte("\x00\x01\x02\xff\xfe\x89PNG\r\n\x1a\n"),
		"bad utf8":              []byte("version: 1\nname: \xc3\x28\n"),
		"no modules":            []byte("version: 1\nworld_size: 8\n"),
		"anchored keys":         []byte("version: 1\n&a world_size: 8\n*a : 3\n"),
		"merge key":             []byte("version: 1\nworld_size: 8\nbase: &b {tp: 2}\nmodules:\n- {<<: *b, name: language, num_ranks: 8}\n"),
		"tags":                  []byte("version: !!binary AAAA\nworld_size: !!int \"8\"\nmodules: !!map {}\n"),
		"two documents":         []byte("version: 1\n---\nversion: 1\n"),
		"unknown anchor":        []byte("version: 1\nmodules: *nope\n"),
		"tabs":                  []byte("version: 1\n\tworld_size: 8\n"),
		"bom":                   []byte("\ufeffversion: 1\nworld_size: 1\nmodules: [{name: language, num_ranks: 1}]\n"),
		"crlf":                  []byte("version: 1\r\nworld_size: 1\r\nmodules: [{name: language, num_ranks: 1}]\r\n"),
		"integer forms":         []byte("version: 1\nworld_size: 010\ncluster: {nodes: 0x2, gpus_per_node: 0b100}\nmodules:\n- {name: language, num_ranks: 1_000, tp: !!int \"2\", cp: !!float 1, rank_offset: -1e400}\n"),
		"merge keys":            []byte("version: 1\nworld_size: 8\nmodules:\n- &v {name: vision, num_ranks: 4}\n- <<: [*v, *v]\n  name: language\n"),
		"key out of its list":   []byte("version: 1\nworld_size: 8\nmodules:\n  - name: language\n    num_ranks: 8\n  tp: 2\n"),
		"control character":     []byte("version: 1\nname: \"\x1b[2J\"\n"),
		"model at the limits":   []byte("version: 1\nworld_size: 8\ncluster: {nodes: 1, gpus_per_node: 8, gpu_memory: 64TiB}\ntraining: {sequence_parallel: true, recompute_granularity: full, recompute_method: uniform, recompute_num_layers: 1}\nmodules:\n- {name: language, num_ranks: 8, vpp: 16777216, model: {num_layers: 16777216, hidden_size: 16777216, num_attention_heads: 1, seq_length: 16777216, vocab_size: 16777216, num_experts: 16777216, moe_router_topk: 16777216}}\n"),
		"model files":           []byte("version: 1\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 4, model: {hf_config: /dev/zero}}\n- {name: vision, num_ranks: 4, model: {hf_config: /, preset: llama3-8b}}\n"),
		"model freq list":       []byte("version: 1\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 8, model: {preset: deepseek-v3, moe_layer_freq: [1, 0, 2, x, [1]], normalization: [RMSNorm]}}\n"),
	}
}

// LayoutSeeds are seeds for the fuzz targets that build their layouts
// with LayoutFromBytes: one to three modules, colocated or not, on every
// target.
func LayoutSeeds() [][]byte {
	return [][]byte{
		{0}, {1, 0, 0}, {2, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1}, {2, 0, 0, 1, 0, 0, 1, 2, 0, 0, 1, 2, 1, 1, 0, 1, 0, 0, 3},
		{1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}, {0, 0, 1, 3, 2, 1, 2, 1, 2, 2, 3}, {2, 0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 2, 1, 0, 0, 1, 0, 0, 1},
		{2, 0, 0, 1, 0, 0, 1, 2, 0, 0, 1, 2, 1, 1, 0, 1, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 1},
		{1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1}, {1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1},
		{2, 0, 2, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1},
	}
}
