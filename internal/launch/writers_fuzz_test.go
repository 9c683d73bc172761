package launch

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// FuzzWriters: whatever the job's name, the program's arguments and an
// environment value hold, a plan Build accepts is delivered intact by
// every writer. The sh and Slurm scripts run under bash with a stand-in
// torchrun (and srun, scontrol) that records its argv and environment;
// the JSON plan decodes to the same argv; the Kubernetes documents decode
// to the same program, and no plain scalar in them is one a YAML 1.1
// loader reads as a non-string; the megatron-specs Python parses to the
// template's statements and the plan's topology, whatever the name.
// Build may refuse (a NUL byte, text that is not UTF-8), but with a
// reason.
func FuzzWriters(f *testing.F) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		f.Skip("bash not found")
	}
	f.Add("three-module-4node", []byte("--lr\x001e-4"), "INFO")
	f.Add("evil\ntouch pwned", []byte(strings.Join(hostile, "\x00")), "$(touch pwned) 'q'\r\nnext")
	f.Add("yes", []byte("=\x00<<\x00on\x000x1F\x001:20\x002001-12-14\x00~\x00"), "no")
	f.Add("$(id)", []byte("'\x00\"\x00`\x00\\\x00!\x00$$\x00%"), "$((1+1))")
	res := check(f, threeModule)
	python, _ := exec.LookPath("python3")
	f.Fuzz(func(t *testing.T, name string, args []byte, value string) {
		if !utf8.ValidString(name) {
			return // a layout's name is UTF-8: the parser refuses other text
		}
		prog := append([]string{"train.py"}, strings.Split(string(args), "\x00")...)
		p, d, err := Build(res, Options{Hosts: hosts4, Program: prog, MasterPort: DefaultMasterPort, Env: []EnvVar{{"EXTRA", value}}})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("refused without a reason")
			}
			return
		}
		if p == nil || d.HasErrors() {
			t.Fatalf("no plan and no error: %+v", d.Items)
		}
		p.Name = name

		// sh: node 0's script, under bash, with a stand-in torchrun.
		script := writeScript(t, func(b *bytes.Buffer) error { return WriteSh(b, p) })
		work := t.TempDir()
		cmd := exec.Command(bash, script, "0")
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "NODE_RANK=", "PATH="+fakeBin(t, map[string]string{"torchrun": fakeTorchrun})+":"+os.Getenv("PATH"), "RECORD="+filepath.Join(work, "rec"))
		if out, err := cmd.CombinedOutput(); err != nil {
			b, _ := os.ReadFile(script)
			t.Fatalf("sh plan: %v\n%s\n%s", err, out, b)
		}
		env, _, argv := record(t, filepath.Join(work, "rec.0"))
		if !slices.Equal(argv, p.Node(0).Command[1:]) || env[3] != value {
			t.Fatalf("sh plan delivered %q with EXTRA=%q, want %q and %q", argv, env[3], p.Node(0).Command[1:], value)
		}
		if _, err := os.Stat(filepath.Join(work, "pwned")); err == nil {
			t.Fatal("the sh plan ran a command of its input")
		}

		// Slurm: every node, srun starting them in the allocation's order.
		script = writeScript(t, func(b *bytes.Buffer) error { return WriteSlurm(b, p) })
		work, out, code := runSlurm(t, script, sorted(hosts4), hosts4)
		if code != 0 {
			b, _ := os.ReadFile(script)
			t.Fatalf("slurm plan: exit %d\n%s\n%s", code, out, b)
		}
		for i, n := range p.Nodes() {
			env, _, argv := record(t, filepath.Join(work, "rec."+n.Host))
			if !slices.Equal(argv, n.Command[1:]) || env[3] != value {
				t.Fatalf("slurm node %d delivered %q with EXTRA=%q, want %q and %q", i, argv, env[3], n.Command[1:], value)
			}
		}

		var js bytes.Buffer
		if err := WriteJSON(&js, p); err != nil {
			t.Fatal(err)
		}
		var plan struct {
			Name  string            `json:"name"`
			Env   map[string]string `json:"env"`
			Nodes []struct {
				Command []string `json:"command"`
			} `json:"nodes"`
		}
		if err := json.Unmarshal(js.Bytes(), &plan); err != nil {
			t.Fatalf("json plan: %v", err)
		}
		if !slices.Equal(plan.Nodes[0].Command, p.Node(0).Command) || plan.Env["EXTRA"] != value || plan.Name != name {
			t.Fatalf("json plan: %q, EXTRA=%q, name %q", plan.Nodes[0].Command, plan.Env["EXTRA"], plan.Name)
		}

		// megatron-specs: Python whose statements are the writer's own,
		// whatever the name, and whose TOPOLOGY is the plan's.
		if python != "" {
			checkSpecs(t, python, p)
		}

		// Kubernetes: the documents decode to the program, $ doubled for
		// the kubelet, and no plain scalar means anything but a string.
		k, _, err := Build(res, Options{Program: prog, MasterPort: DefaultMasterPort, Env: []EnvVar{{"EXTRA", value}}})
		if err != nil {
			t.Fatalf("the same plan without hosts: %v", err)
		}
		k.Name, k.Image = name, "img"
		for _, write := range []func(io.Writer, *Plan) error{WriteK8s, WritePyTorchJob} {
			var b bytes.Buffer
			if err := write(&b, k); err != nil {
				t.Fatal(err)
			}
			dec := yaml.NewDecoder(&b)
			found := false
			for {
				var doc yaml.Node
				if err := dec.Decode(&doc); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("k8s plan: %v", err)
				}
				checkPlainScalars(t, &doc)
				found = found || hasProgram(&doc, k.Program)
			}
			if !found {
				t.Fatalf("no container runs %q", k.Program)
			}
		}
	})
}

// specsCheck parses the megatron-specs Python (argv[1]) without running
// it: its top-level statements are the template's, and TOPOLOGY holds the
// JSON of argv[2].
const specsCheck = `import ast, json, sys
tree = ast.parse(open(sys.argv[1], encoding="utf-8").read())
kinds = [type(n).__name__ for n in tree.body]
assert kinds == ["Import", "Import", "ImportFrom", "Assign", "FunctionDef", "If"], kinds
topo = tree.body[3]
assert topo.targets[0].id == "TOPOLOGY"
assert json.loads(topo.value.value) == json.load(open(sys.argv[2])), "TOPOLOGY differs"
`

func checkSpecs(t *testing.T, python string, p *Plan) {
	t.Helper()
	dir := t.TempDir()
	var b bytes.Buffer
	if err := WriteMegatronSpecs(&b, p); err != nil {
		t.Fatal(err)
	}
	specs, topo := filepath.Join(dir, "specs.py"), filepath.Join(dir, "topology.json")
	if err := os.WriteFile(specs, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(topo, p.Topology, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(python, "-c", specsCheck, specs, topo).CombinedOutput(); err != nil {
		t.Fatalf("megatron-specs: %v\n%s\n%s", err, out, b.String())
	}
}

// hasProgram reports whether a sequence in n ends with the program, each
// word with $ doubled as the kubelet wants.
func hasProgram(n *yaml.Node, prog []string) bool {
	if n.Kind == yaml.SequenceNode && len(n.Content) >= len(prog) {
		tail := n.Content[len(n.Content)-len(prog):]
		ok := true
		for i, a := range prog {
			if tail[i].Kind != yaml.ScalarNode || tail[i].Value != strings.ReplaceAll(a, "$", "$$") {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	for _, c := range n.Content {
		if hasProgram(c, prog) {
			return true
		}
	}
	return false
}

// checkPlainScalars fails on a plain scalar a YAML 1.1 or 1.2 loader
// would read as something other than the string it is decoded as here.
func checkPlainScalars(t *testing.T, n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Style == 0 && n.Tag == "!!str" && yamlAmbiguous(n.Value) {
		t.Fatalf("plain scalar %q at line %d is not a string to a YAML 1.1 loader", n.Value, n.Line)
	}
	for _, c := range n.Content {
		checkPlainScalars(t, c)
	}
}

// Text that is not UTF-8 cannot reach the json and k8s plans unchanged:
// refused, with the reason, rather than mangled.
func TestBuildRefusesNonUTF8(t *testing.T) {
	res := check(t, threeModule)
	_, _, err := Build(res, Options{Hosts: hosts4, Program: []string{"train.py", "a\xffb"}, MasterPort: DefaultMasterPort})
	if err == nil || !strings.Contains(err.Error(), `program argument 1 "a\xffb" is not UTF-8 text`) {
		t.Fatalf("argument: %v", err)
	}
	_, _, err = Build(res, Options{Hosts: hosts4, Program: []string{"train.py"}, MasterPort: DefaultMasterPort, Env: []EnvVar{{"X", "\xc3("}}})
	if err == nil || !strings.Contains(err.Error(), "environment variable X is not UTF-8 text") {
		t.Fatalf("env: %v", err)
	}
}
