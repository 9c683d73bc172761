package layout_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// Hostile seeds: what a fuzzer takes long to find on its own.
func hostileSeeds() map[string][]byte {
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
		"model at the limits":   []byte("version: 1\nworld_size: 8\ncluster: {nodes: 1, gpus_per_node: 8, gpu_memory: 64TiB}\ntraining: {sequence_parallel: true, recompute_granularity: full}\nmodules:\n- {name: language, num_ranks: 8, vpp: 16777216, model: {num_layers: 16777216, hidden_size: 16777216, num_attention_heads: 1, seq_length: 16777216, vocab_size: 16777216, num_experts: 16777216, moe_router_topk: 16777216}}\n"),
		"model files":           []byte("version: 1\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 4, model: {hf_config: /dev/zero}}\n- {name: vision, num_ranks: 4, model: {hf_config: /, preset: llama3-8b}}\n"),
		"model freq list":       []byte("version: 1\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 8, model: {preset: deepseek-v3, moe_layer_freq: [1, 0, 2, x, [1]], normalization: [RMSNorm]}}\n"),
	}
}

// fuzzSeeds adds the example layouts, the golden layouts and the hostile
// inputs to f's corpus.
func fuzzSeeds(f *testing.F) {
	var files []string
	for _, dir := range []string{
		filepath.Join(testutil.RepoRoot(), "layouts"),
		filepath.Join(testutil.GoldenDir(), "layouts"),
		filepath.Join(testutil.RepoRoot(), "testdata", "demo"),
	} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		files = append(files, m...)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, b := range hostileSeeds() {
		f.Add(b)
	}
}

// checkParse asserts what holds for the parse of any input.
func checkParse(t *testing.T, data []byte) {
	l, d := layout.Parse("fuzz.yaml", data)
	if l == nil || d == nil {
		t.Fatal("Parse returned nil")
	}
	for _, x := range d.Items {
		if _, ok := diag.Lookup(x.Rule); !ok {
			t.Errorf("rule %q is not in the catalogue: %+v", x.Rule, x)
		}
		if x.Line < 1 || x.Column < 1 {
			t.Errorf("diagnostic without a position: %+v", x)
		}
		if x.Message == "" {
			t.Errorf("diagnostic without a message: %+v", x)
		}
	}
	if len(d.Items) == 0 {
		// A layout the parser accepts is complete enough to check.
		if l.Version != 1 || l.WorldSize < 1 || len(l.Modules) == 0 {
			t.Errorf("accepted without version, world or modules: %+v", l)
		}
	}
	for _, m := range l.Modules {
		if !m.Broken && !m.Unplaced && m.NumRanks > 0 && m.End() > 2*layout.MaxWorldSize {
			t.Errorf("module %q ends at %d, past every bound", m.Name, m.End())
		}
	}
}

func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, data)
	})
}

// FuzzParseSpecOn: a spec read on a machine (suggest --probe) has the
// machine's cluster whenever it is accepted, and names only values it was
// given, each changed, at a position.
func FuzzParseSpecOn(f *testing.F) {
	fuzzSeeds(f)
	f.Add([]byte("version: 1\nworld_size: 3\ncluster: {nodes: 2, gpus_per_node: 8, gpu_memory: 40GiB}\nmodules:\n- {name: language, num_ranks: 2}\n"))
	m := &layout.Machine{Cluster: layout.Cluster{Nodes: 1, GPUsPerNode: 2}, GPUMemory: 81559 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, d := layout.ParseSpecOn("fuzz.yaml", data, m)
		for _, x := range d.Items {
			if _, ok := diag.Lookup(x.Rule); !ok || x.Line < 1 || x.Message == "" {
				t.Errorf("diagnostic without a rule, a position or a message: %+v", x)
			}
		}
		for _, r := range l.Replaced {
			if r.Spec == r.Machine || r.Pos.Line < 1 || !l.Given(strings.Split(r.Key, ".")[0]) {
				t.Errorf("replacement of a value not given, or not changed: %+v", r)
			}
		}
		if d.HasErrors() {
			return
		}
		if l.WorldSize != 2 || *l.Cluster != m.Cluster || l.GPUMemory != m.GPUMemory || l.Machine != m {
			t.Errorf("accepted without the machine's cluster: world %d, cluster %+v, memory %d", l.WorldSize, l.Cluster, l.GPUMemory)
		}
		for _, mod := range l.Modules {
			if mod.Given("num_ranks") && mod.NumRanks > 2 {
				t.Errorf("module %q has %d ranks on a machine of 2", mod.Name, mod.NumRanks)
			}
		}
	})
}
