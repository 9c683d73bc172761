package validate_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// fuzzBudget is how long one input may take, parse to output, before it
// counts as a hang. It bounds hangs, not speed (the benchmarks measure
// that): real runs take milliseconds to a second for the largest seeds,
// and several times that under the fuzzer's instrumentation, -race or a
// machine shared by many builds.
const fuzzBudget = 30 * time.Second

func FuzzCheck(f *testing.F) {
	testutil.AddLayoutSeeds(f)
	for _, h := range hostile {
		f.Add([]byte(h.src))
	}
	// The breaking example of every rule in docs/rules.md.
	if doc, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "docs", "rules.md")); err == nil {
		for _, m := range yamlBlock.FindAllSubmatch(doc, -1) {
			f.Add(m[1])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Run in a goroutine to bound the time; bring a panic back to
		// this one, where the fuzzer records it with its input.
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			checkInvariants(t, data)
		}()
		select {
		case p := <-done:
			if p != nil {
				panic(p)
			}
		case <-time.After(fuzzBudget):
			t.Fatalf("no output within %v", fuzzBudget)
		}
	})
}

// checkInvariants parses, checks and prints one input in every format,
// and asserts what must hold for any input.
func checkInvariants(t *testing.T, data []byte) {
	l, d := layout.Parse("fuzz.yaml", data)
	r := validate.Check(l, d)
	for _, x := range r.Diags.Items {
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
	if !r.Diags.HasErrors() && r.Topology == nil {
		t.Errorf("no error, but no topology: %+v", r.Diags.Items)
	}
	if r.Topology != nil && len(r.Topology.Modules) != len(l.Modules) {
		t.Errorf("topology has %d modules, layout %d", len(r.Topology.Modules), len(l.Modules))
	}
	// Every writer handles every result.
	for _, strict := range []bool{false, true} {
		_ = r.Summary(strict)
		if err := diag.WriteJSON(io.Discard, diag.NewReport(r.Diags, strict)); err != nil {
			t.Error(err)
		}
	}
	if err := diag.WriteText(io.Discard, r.Diags); err != nil {
		t.Error(err)
	}
	if err := diag.WriteGitHub(io.Discard, r.Diags); err != nil {
		t.Error(err)
	}
	if err := diag.WriteSARIF(io.Discard, []*diag.List{r.Diags}); err != nil {
		t.Error(err)
	}
}

// hostile inputs, each with a rule it must be reported under (exit 1).
var hostile = []struct {
	name, src, rule string
}{
	// Huge worlds: no rule's cost grows with the ranks.
	{"2^24 ranks, batch error", "version: 1\nworld_size: 16777216\nbatch: {micro_batch_size: 3, global_batch_size: 4}\nmodules: [{name: language, num_ranks: 16777216}]\n", "global-batch-not-divisible"},
	// (4,000 modules: "many modules" below has 10,000 of fewer fields;
	// these leave a busy machine some margin.)
	{"2^24 ranks over 4,000 modules", tiledModules(4000, 1<<24), "bridge-leaders-not-divisible"},
	{"4,000 colocated modules of 2^24 ranks", colocatedModules(4000, 1<<24, "pp: 2"), "colocated-pp-cp-unsupported"},
	{"empty", "", "yaml-syntax"},
	{"only a comment", "# nothing\n", "yaml-syntax"},
	{"binary", "\x00\x01\x02\xff\xfe\x89PNG\r\n\x1a\n", "yaml-syntax"},
	{"bad utf-8", "version: 1\nname: \xc3\x28\n", "yaml-syntax"},
	{"alias bomb", aliasBomb(), "unknown-field"},
	{"alias bomb inside modules", nestedAliases("version: 1\nworld_size: 8\nmodules:\n- &l0 {name: language, num_ranks: 8}\n", "- ", 20), "invalid-value"},
	{"alias bomb inside a module", nestedAliases("version: 1\nworld_size: 8\nmodules:\n- name: language\n  num_ranks: 8\n  x: &l0 [a, b]\n", "  x", 20), "unknown-field"},
	{"alias bomb as modules", "version: 1\nworld_size: 8\nx: &m {name: language, num_ranks: 8}\nl: &l [*m, *m, *m, *m, *m, *m, *m, *m]\nmodules: [*l, *l, *l, *l]\n", "unknown-field"},
	{"10000-deep nesting", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), "yaml-syntax"},
	{"20000-deep unclosed", strings.Repeat("[", 20000), "yaml-syntax"},
	{"deep mappings", strings.Repeat("{a: ", 5000) + "1" + strings.Repeat("}", 5000), "unknown-field"},
	{"huge ints", "version: 1\nworld_size: 99999999999999999999999999\nmodules:\n- {name: language, num_ranks: 0x7fffffffffffffff, tp: 1e400}\n", "invalid-value"},
	{"huge cluster", "version: 1\ncluster: {nodes: 9223372036854775807, gpus_per_node: 9223372036854775807}\nmodules: [{name: language, num_ranks: 8}]\n", "invalid-value"},
	{"cluster product overflows", "version: 1\ncluster: {nodes: 16777216, gpus_per_node: 16777216}\nmodules: [{name: language, num_ranks: 8}]\n", "invalid-value"},
	{"huge batch", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 2147483649}\nmodules: [{name: language, num_ranks: 8}]\n", "invalid-value"},
	{"negative", "version: 1\nworld_size: -9223372036854775808\nmodules: [{name: language, num_ranks: -1}]\n", "invalid-value"},
	{"no modules", "version: 1\nworld_size: 8\n", "invalid-value"},
	{"empty modules", "version: 1\nworld_size: 8\nmodules: []\n", "invalid-value"},
	{"anchored keys", "version: 1\n&a world_size: 8\n*a : 3\n", "yaml-syntax"},
	{"merge key", "version: 1\nworld_size: 8\nbase: &b {tp: 2}\nmodules:\n- {<<: *b, name: language, num_ranks: 8}\n", "unknown-field"},
	{"tags", "version: !!binary AAAA\nworld_size: !!int \"8\"\nmodules: !!map {}\n", "unsupported-version"},
	{"two documents", "version: 1\n---\nversion: 1\n", "yaml-syntax"},
	{"unknown anchor", "version: 1\nmodules: *nope\n", "yaml-syntax"},
	{"tab indent", "version: 1\n\tworld_size: 8\n", "yaml-syntax"},
	{"too large", "version: 1\n#" + strings.Repeat("x", layout.MaxFileSize) + "\n", "yaml-syntax"},
	{"many modules", manyModules(10000), "world-gap"},
	{"many incompatible modules", bridgeFlood(2000), "dp-not-compatible"},
	// Every pair of these spans overlaps: one diagnostic per module, not
	// one per pair (12.5 million).
	{"overlap flood", overlapFlood(5000), "span-overlap"},
}

// overlapFlood is n modules on nested spans [0, i+1).
func overlapFlood(n int) string {
	var b strings.Builder
	b.WriteString("version: 1\nworld_size: " + itoa(n) + "\nmodules:\n")
	for i := range n - 1 {
		b.WriteString("- {name: m" + itoa(i) + ", num_ranks: " + itoa(i+1) + ", rank_offset: 0}\n")
	}
	b.WriteString("- {name: language, num_ranks: " + itoa(n) + ", rank_offset: 0}\n")
	return b.String()
}

func aliasBomb() string {
	s := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, c := range "bcdefghij" {
		s += string(c) + ": &" + string(c) + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n"
		prev = string(c)
	}
	return s
}

// nestedAliases appends n levels of ten aliases each to the previous
// level: 10^n nodes if expanded. prefix starts each line ("- " for list
// items, "  x" for module fields, numbered).
func nestedAliases(head, prefix string, n int) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 1; i <= n; i++ {
		b.WriteString(prefix)
		if prefix != "- " {
			b.WriteString(itoa(i) + ": ")
		}
		b.WriteString("&l" + itoa(i) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*l" + itoa(i-1))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// tiledModules is n encoders of tp 2 tiling a world of size ranks with
// the language module, on nodes of 8 GPUs.
func tiledModules(n, size int) string {
	var b strings.Builder
	per := size / n / 2 * 2
	b.WriteString("version: 1\ncluster: {nodes: " + itoa(size/8) + ", gpus_per_node: 8}\nmodules:\n")
	for i := range n - 1 {
		b.WriteString("- {name: m" + itoa(i) + ", num_ranks: " + itoa(per) + ", tp: 2}\n")
	}
	b.WriteString("- {name: language, num_ranks: " + itoa(size-per*(n-1)) + "}\n")
	return b.String()
}

// colocatedModules is the language module and n-1 encoders on the same
// size ranks, each encoder with extra.
func colocatedModules(n, size int, extra string) string {
	var b strings.Builder
	b.WriteString("version: 1\ncluster: {nodes: " + itoa(size/8) + ", gpus_per_node: 8}\nmodules:\n")
	b.WriteString("- {name: language, num_ranks: " + itoa(size) + ", tp: 8}\n")
	for i := range n - 1 {
		b.WriteString("- {name: m" + itoa(i) + ", num_ranks: " + itoa(size) + ", rank_offset: 0, " + extra + "}\n")
	}
	return b.String()
}

func manyModules(n int) string {
	var b strings.Builder
	b.WriteString("version: 1\nworld_size: 16777216\nmodules:\n")
	for i := range n {
		b.WriteString("- {name: m")
		b.WriteString(itoa(i))
		b.WriteString(", num_ranks: 1}\n")
	}
	return b.String()
}

// bridgeFlood is a megatron-bridge layout of n encoders with dp 2 and 3 in
// turn, every pair of which but equal ones breaks dp-not-compatible.
func bridgeFlood(n int) string {
	var b strings.Builder
	b.WriteString("version: 1\ntarget: megatron-bridge\nworld_size: ")
	b.WriteString(itoa(n/2*2 + (n-n/2)*3 + 1))
	b.WriteString("\nmodules:\n")
	for i := range n {
		b.WriteString("- {name: e" + itoa(i) + ", num_ranks: " + itoa(2+i%2) + "}\n")
	}
	b.WriteString("- {name: language, num_ranks: 1}\n")
	return b.String()
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}

// TestHostileInputs: bad input of any kind ends in an invalid result (exit
// 1) with a diagnostic, quickly, without a panic.
func TestHostileInputs(t *testing.T) {
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			type out struct {
				r     *validate.Result
				panic any
			}
			ch := make(chan out, 1)
			go func() {
				defer func() {
					if p := recover(); p != nil {
						ch <- out{panic: p}
					}
				}()
				l, d := layout.Parse("hostile.yaml", []byte(h.src))
				ch <- out{r: validate.Check(l, d)}
			}()
			select {
			case o := <-ch:
				if o.panic != nil {
					t.Fatalf("panic: %v", o.panic)
				}
				if o.r.Valid(false) {
					t.Fatalf("hostile input accepted: %+v", o.r.Diags.Items)
				}
				var rules []string
				for _, d := range o.r.Diags.Items {
					rules = append(rules, d.Rule)
				}
				if !contains(rules, h.rule) {
					t.Errorf("want a %s diagnostic, got %v", h.rule, rules)
				}
				if len(rules) > max(10000, strings.Count(h.src, "name:")+5) {
					t.Errorf("%d diagnostics: a flood", len(rules))
				}
			case <-time.After(fuzzBudget): // a hang bound; speed is the benchmarks'
				t.Fatalf("no result within %v", fuzzBudget)
			}
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Huge but valid layouts are accepted quickly too (exit 0): 2^24 ranks in
// one module, 21 colocated modules of 2^20, 4,000 colocated modules of
// 2^24 (6.7e10 ranks in all), and modules of 2^24-1 ranks whose tp, cp
// and expt_tp groups straddle nodes (warnings only).
func TestHugeValidInputs(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		warnings  int
	}{
		{"2^24 ranks", "version: 1\ncluster: {nodes: 2097152, gpus_per_node: 8}\nmodules: [{name: language, num_ranks: 16777216, tp: 4, cp: 2, pp: 4, ep: 64}]\n", 0},
		{"colocated 2^20 x 21", colocatedModules(21, 1<<20, "tp: 2"), 0},
		{"4,000 colocated modules of 2^24 ranks", colocatedModules(4000, 1<<24, "tp: 4"), 0},
		// 2^24-1 = 3^2*5*7*13*17*241.
		{"2^24-1 ranks off by one", "version: 1\ncluster: {nodes: 2097152, gpus_per_node: 8}\nmodules:\n- {name: vision, num_ranks: 1}\n- {name: language, num_ranks: 16777215, tp: 3, expt_tp: 7}\n", 2},
		{"2^24-1 ranks, cp strided", "version: 1\ncluster: {nodes: 1864135, gpus_per_node: 9}\nmodules:\n- {name: language, num_ranks: 16777215, tp: 3, cp: 5, expt_tp: 7}\n", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan *validate.Result, 1)
			go func() {
				l, d := layout.Parse("huge.yaml", []byte(tt.src))
				done <- validate.Check(l, d)
			}()
			select {
			case r := <-done:
				require.True(t, r.Valid(false), "%+v", r.Diags.Items)
				require.NotNil(t, r.Topology)
				_, w := r.Diags.Count()
				assert.Equal(t, tt.warnings, w, "%+v", r.Diags.Items)
			case <-time.After(fuzzBudget): // a hang bound; speed is the benchmarks'
				t.Fatalf("no result within %v", fuzzBudget)
			}
		})
	}
}
