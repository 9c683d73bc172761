package layout_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

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
	// The env block keeps only variables a plan can set, each at its place.
	for _, e := range l.Env {
		if !layout.EnvNamePattern.MatchString(e.Name) || strings.ContainsRune(e.Value, 0) || l.EnvPos(e.Name).Line < 1 {
			t.Errorf("env variable %q=%q kept without a valid name, a text value or a position", e.Name, e.Value)
		}
	}
	if l.ExpandableSegments() && !strings.Contains(l.Env[slices.IndexFunc(l.Env, func(e layout.EnvVar) bool { return e.Name == layout.AllocConf })].Value, "expandable_segments:True") {
		t.Errorf("expandable segments without expandable_segments:True in %s", layout.AllocConf)
	}
	// Every training key the parser kept reads back from the text it
	// writes (the float and list keys included), so a launch plan's
	// arguments and an imported layout say what was parsed.
	if l.Training != nil {
		for _, k := range layout.TrainingKeys() {
			if k.IsDefault(l.Training) {
				continue // the default is the key left out
			}
			var back layout.Training
			if v := k.Value(l.Training); !k.Set(&back, v) || k.Value(&back) != v {
				t.Errorf("training.%s: %q does not read back", k.Name, v)
			}
		}
	}
	for _, m := range l.Modules {
		if !m.Broken && !m.Unplaced && m.NumRanks > 0 && m.End() > 2*layout.MaxWorldSize {
			t.Errorf("module %q ends at %d, past every bound", m.Name, m.End())
		}
	}
}

func FuzzParse(f *testing.F) {
	testutil.AddLayoutSeeds(f)
	f.Add([]byte("version: 1\nworld_size: 8\ntraining: {moe_token_dispatcher_type: alltoall, moe_expert_capacity_factor: 1.25, moe_pad_expert_input_to_capacity: true, recompute_granularity: selective, recompute_modules: [mla_up_proj, mlp]}\nmodules:\n- {name: language, num_ranks: 8, ep: 8}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, data)
	})
}

// FuzzParseSpecOn: a spec read on a machine (suggest --probe) has the
// machine's cluster whenever it is accepted, and names only values it was
// given, each changed, at a position.
func FuzzParseSpecOn(f *testing.F) {
	testutil.AddLayoutSeeds(f)
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
