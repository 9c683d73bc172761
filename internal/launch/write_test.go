package launch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// hostile are program arguments that a careless script would split,
// expand or execute.
var hostile = []string{
	"it's", `say "hi"`, "$(touch pwned)", "`touch pwned`", "${HOME}", "$HOME", "a b", "tab\there",
	"new\nline", "cr\r\nlf", "\r", "*", "~", "!x", `back\slash`, "semi;colon", "pipe|amp&", "<in>out", "#hash", "", "-", "--",
	"--flag=it's $x", "é ünïcode", "'", `'\''`, "%s\\0", "$((1+1))", "{a,b}",
}

func needBash(t *testing.T) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	return bash
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"abc": "abc", "--nnodes=4": "--nnodes=4", "/a/b.py": "/a/b.py", "": "''", "a b": "'a b'",
		"it's": `'it'\''s'`, "$x": "'$x'", "~": "'~'", "*": "'*'",
	} {
		assert.Equal(t, want, Quote(in), in)
	}
	assert.Equal(t, `'A=1' b`, QuoteArgv([]string{"A=1", "b"}), "a first word with = is not an assignment")

	// Every hostile string survives a real shell exactly, as one word.
	bash := needBash(t)
	dir := t.TempDir()
	line := QuoteArgv(append([]string{"printf", `%s\0`}, hostile...))
	cmd := exec.Command(bash, "-c", line)
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err, line)
	assert.Equal(t, hostile, splitNUL(out))
	assert.NoFileExists(t, filepath.Join(dir, "pwned"))
}

func splitNUL(b []byte) []string {
	s := strings.Split(string(b), "\x00")
	return s[:len(s)-1]
}

// fakeBin writes executables into a directory for PATH.
func fakeBin(t *testing.T, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/usr/bin/env bash\n"+body), 0o755))
	}
	return dir
}

// fakeTorchrun records its environment and argv, NUL-separated, in
// $RECORD.$SLURM_NODEID (or $RECORD.0).
const fakeTorchrun = `out="$RECORD.${SLURM_NODEID:-0}"
printf '%s\0' "$CUDA_DEVICE_ORDER" "$OMP_NUM_THREADS" "${MIMOPLAN_TOPOLOGY-unset}" "${EXTRA-unset}" > "$out"
printf '%s\0' "$@" >> "$out"
`

// record reads what fakeTorchrun wrote: the four variables and the argv.
func record(t *testing.T, path string) (env, argv []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	all := splitNUL(b)
	require.GreaterOrEqual(t, len(all), 4)
	return all[:4], all[4:]
}

func writeScript(t *testing.T, write func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, write(&b))
	path := filepath.Join(t.TempDir(), "plan")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o755))
	return path
}

func TestShScript(t *testing.T) {
	bash := needBash(t)
	p := build(t, threeModule, Options{
		Hosts: hosts4, Program: append([]string{"train.py"}, hostile...), TopologyPath: "/shared/it's here.json",
		Env: []EnvVar{{"EXTRA", "$(touch pwned) 'q'\r\nnext"}},
	})
	script := writeScript(t, func(b *bytes.Buffer) error { return WriteSh(b, p) })
	require.NoError(t, exec.Command(bash, "-n", script).Run(), "bash -n")

	bin := fakeBin(t, map[string]string{"torchrun": fakeTorchrun})
	run := func(env []string, args ...string) (string, int) {
		work := t.TempDir()
		cmd := exec.Command(bash, append([]string{script}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "NODE_RANK=", "PATH="+bin+":"+os.Getenv("PATH"), "RECORD="+filepath.Join(work, "rec"))
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		assert.NoFileExists(t, filepath.Join(work, "pwned"))
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return work + "|" + string(out), code
	}
	for i, n := range p.Nodes {
		args := []string{strconv.Itoa(i)}
		var env []string
		if i == 3 {
			args, env = nil, []string{"NODE_RANK=3"}
		}
		res, code := run(env, args...)
		work, out, _ := strings.Cut(res, "|")
		require.Equal(t, 0, code, out)
		gotEnv, argv := record(t, filepath.Join(work, "rec.0"))
		assert.Equal(t, []string{"PCI_BUS_ID", "1", "/shared/it's here.json", "$(touch pwned) 'q'\r\nnext"}, gotEnv)
		assert.Equal(t, n.Command[1:], argv, "node %d runs exactly its command", i)
	}
	for _, bad := range []string{"4", "x", "-1", "01", "1 2", "99999999999999999999"} {
		res, code := run(nil, bad)
		assert.Equal(t, 2, code, "node rank %q: %s", bad, res)
	}
	res, code := run(nil)
	assert.Equal(t, 2, code, res)
	assert.Contains(t, res, "usage:")
	res, code = run(nil, "1", "2")
	assert.Equal(t, 2, code, "a second argument is a mistake, not ignored: %s", res)
	assert.Contains(t, res, "usage:")
	res, code = run([]string{"NODE_RANK=7"})
	assert.Equal(t, 2, code, res)
	assert.Contains(t, res, "node rank 7 is outside 0-3")
	work, out, _ := strings.Cut(func() string { r, _ := run([]string{"NODE_RANK=3"}, "1"); return r }(), "|")
	_, argv := record(t, filepath.Join(work, "rec.0"))
	assert.Equal(t, p.Nodes[1].Command[1:], argv, "the argument wins over NODE_RANK: %s", out)
}

func TestShScriptC10d(t *testing.T) {
	bash := needBash(t)
	p := build(t, threeModule, Options{Hosts: hosts4, Program: []string{"train.py", "a b"}, Rendezvous: C10d})
	script := writeScript(t, func(b *bytes.Buffer) error { return WriteSh(b, p) })
	b, _ := os.ReadFile(script)
	assert.Contains(t, string(b), "# note: c10d rendezvous")
	assert.Contains(t, string(b), "# join order")
	work := t.TempDir()
	cmd := exec.Command(bash, script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+fakeBin(t, map[string]string{"torchrun": fakeTorchrun})+":"+os.Getenv("PATH"), "RECORD="+filepath.Join(work, "rec"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	_, argv := record(t, filepath.Join(work, "rec.0"))
	assert.Equal(t, p.Nodes[0].Command[1:], argv, "no node rank needed")
	assert.Equal(t, p.Nodes[0].Command, p.Nodes[3].Command)
}

// TestCommentsStayComments gives the layout a name that would end a
// comment line; every line of each header must still be a comment.
func TestCommentsStayComments(t *testing.T) {
	src := strings.Replace(threeModule, "name: three-module-4node", `name: "evil\ntouch pwned\r\u2028x"`, 1)
	p := build(t, src, Options{Hosts: hosts4, Program: []string{"t.py"}, Image: "img"})
	for _, format := range Formats {
		var b bytes.Buffer
		require.NoError(t, Write(&b, format, p))
		sc := bufio.NewScanner(&b)
		for sc.Scan() {
			line := sc.Text()
			assert.NotContains(t, line, "\r")
			if strings.Contains(line, "touch pwned") {
				assert.True(t, strings.HasPrefix(line, "#") || strings.Contains(line, `"name": "evil\ntouch`), "%s: %q", format, line)
			}
		}
	}
}

// slurmScript runs an sbatch script with fake scontrol and srun: srun runs
// its command once per node, with SLURM_NODEID set, as Slurm would.
func runSlurm(t *testing.T, script, nodelist string) (work, out string, code int) {
	t.Helper()
	bash := needBash(t)
	bin := fakeBin(t, map[string]string{
		"torchrun": fakeTorchrun,
		"scontrol": `[ "$1 $2" = "show hostnames" ] || exit 9
tr ',' '\n' <<<"$3"
`,
		"srun": `n=0
while [[ $1 == --* ]]; do
  case $1 in --nodes=*) n=${1#--nodes=} ;; esac
  shift
done
for ((i = 0; i < n; i++)); do
  SLURM_NODEID=$i "$@" || exit
done
`,
	})
	work = t.TempDir()
	cmd := exec.Command(bash, script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "RECORD="+filepath.Join(work, "rec"), "SLURM_JOB_NODELIST="+nodelist)
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	assert.NoFileExists(t, filepath.Join(work, "pwned"))
	return work, string(b), code
}

func sbatchDirectives(t *testing.T, script string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(script)
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	require.Equal(t, "#!/usr/bin/env bash", lines[0])
	got := map[string]string{}
	for _, l := range lines[1:] {
		// sbatch reads directives only up to the first command.
		if !strings.HasPrefix(l, "#") {
			break
		}
		if d, ok := strings.CutPrefix(l, "#SBATCH "); ok {
			k, v, _ := strings.Cut(d, "=")
			got[k] = v
		}
	}
	return got
}

func TestSlurm(t *testing.T) {
	prog := append([]string{"train.py"}, hostile...)
	t.Run("allocation picks the hosts", func(t *testing.T) {
		p := build(t, threeModule, Options{Program: prog, Env: []EnvVar{{"EXTRA", "a'b"}}})
		script := writeScript(t, func(b *bytes.Buffer) error { return WriteSlurm(b, p) })
		assert.Equal(t, map[string]string{
			"--job-name": "three-module-4node", "--nodes": "4", "--ntasks-per-node": "1", "--gpus-per-node": "8",
		}, sbatchDirectives(t, script))
		b, _ := os.ReadFile(script)
		assert.Contains(t, string(b), "srun --nodes=4 --ntasks=4 --ntasks-per-node=1 --kill-on-bad-exit=1")
		assert.Contains(t, string(b), `--node-rank="$SLURM_NODEID" --master-addr="$MASTER_ADDR" --master-port=29500 "$@"`)

		work, out, code := runSlurm(t, script, "gpu7,gpu8,gpu9,gpu10")
		require.Equal(t, 0, code, out)
		for i := range 4 {
			env, argv := record(t, filepath.Join(work, "rec."+strconv.Itoa(i)))
			assert.Equal(t, []string{"PCI_BUS_ID", "1", "unset", "a'b"}, env)
			want := plainArgv(p.words(lit(strconv.Itoa(i)), lit("gpu7")))
			assert.Equal(t, want[1:], argv, "node %d", i)
		}

		_, out, code = runSlurm(t, script, "gpu7,gpu8")
		assert.Equal(t, 1, code)
		assert.Contains(t, out, "the allocation has 2 nodes, the layout needs 4")
	})
	t.Run("given hosts must be the allocation's order", func(t *testing.T) {
		p := build(t, threeModule, Options{Hosts: hosts4, Program: prog})
		script := writeScript(t, func(b *bytes.Buffer) error { return WriteSlurm(b, p) })
		assert.Equal(t, "h0,h1,h2,h3", sbatchDirectives(t, script)["--nodelist"])
		work, out, code := runSlurm(t, script, "h0,h1,h2,h3")
		require.Equal(t, 0, code, out)
		for i, n := range p.Nodes {
			_, argv := record(t, filepath.Join(work, "rec."+strconv.Itoa(i)))
			assert.Equal(t, n.Command[1:], argv, "node %d", i)
		}
		_, out, code = runSlurm(t, script, "h1,h0,h2,h3")
		assert.Equal(t, 1, code)
		assert.Contains(t, out, "Slurm ordered the nodes h1 h0 h2 h3, the plan needs h0 h1 h2 h3")
	})
	t.Run("one node takes its host from the allocation too", func(t *testing.T) {
		p := build(t, nemotron, Options{LayoutArgs: true})
		script := writeScript(t, func(b *bytes.Buffer) error { return WriteSlurm(b, p) })
		assert.NotContains(t, sbatchDirectives(t, script), "--nodelist")
		b, _ := os.ReadFile(script)
		assert.Contains(t, string(b), "static rendezvous at the allocation's first node")
		assert.NotContains(t, string(b), "localhost")
		work, out, code := runSlurm(t, script, "gpu3")
		require.Equal(t, 0, code, out)
		_, argv := record(t, filepath.Join(work, "rec.0"))
		assert.Equal(t, plainArgv(p.words(lit("0"), lit("gpu3")))[1:], argv)
	})
	t.Run("c10d and a given master", func(t *testing.T) {
		p := build(t, threeModule, Options{MasterAddr: "login1", Rendezvous: C10d, Program: []string{"t.py"}})
		script := writeScript(t, func(b *bytes.Buffer) error { return WriteSlurm(b, p) })
		b, _ := os.ReadFile(script)
		assert.Contains(t, string(b), "# note: c10d rendezvous")
		work, out, code := runSlurm(t, script, "a,b,c,d")
		require.Equal(t, 0, code, out)
		_, argv := record(t, filepath.Join(work, "rec.2"))
		assert.Equal(t, []string{"--nnodes=4", "--nproc-per-node=8", "--rdzv-backend=c10d", "--rdzv-endpoint=login1:29500",
			"--rdzv-id=three-module-4node", "t.py"}, argv)
	})
}

// k8sJob is the part of a PyTorchJob the tests read back.
type k8sJob struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name        string            `yaml:"name"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Spec struct {
		NprocPerNode any                       `yaml:"nprocPerNode"`
		Replicas     map[string]k8sReplicaSpec `yaml:"pytorchReplicaSpecs"`
	} `yaml:"spec"`
}

type k8sReplicaSpec struct {
	Replicas      int    `yaml:"replicas"`
	RestartPolicy string `yaml:"restartPolicy"`
	Template      struct {
		Spec struct {
			Containers []struct {
				Name    string   `yaml:"name"`
				Image   string   `yaml:"image"`
				Command []string `yaml:"command"`
				Env     []struct {
					Name  string `yaml:"name"`
					Value string `yaml:"value"`
				} `yaml:"env"`
				Ports []struct {
					Name          string `yaml:"name"`
					ContainerPort int    `yaml:"containerPort"`
				} `yaml:"ports"`
				Resources struct {
					Limits map[string]int `yaml:"limits"`
				} `yaml:"resources"`
			} `yaml:"containers"`
		} `yaml:"spec"`
	} `yaml:"template"`
}

func TestK8s(t *testing.T) {
	p := build(t, threeModule, Options{
		Program: []string{"train.py", "$(HOME)", "a$b", "it's"}, Image: "nvcr.io/nvidia/pytorch:25.01-py3", MasterPort: 23456,
		Env: []EnvVar{{"EXTRA", "$(X)"}},
	})
	var b bytes.Buffer
	require.NoError(t, WriteK8s(&b, p))
	var job k8sJob
	require.NoError(t, yaml.Unmarshal(b.Bytes(), &job), b.String())
	assert.Equal(t, "kubeflow.org/v1", job.APIVersion)
	assert.Equal(t, "PyTorchJob", job.Kind)
	assert.Equal(t, "three-module-4node", job.Metadata.Name)
	assert.Equal(t, "8", job.Spec.NprocPerNode, "nprocPerNode is a string")
	require.Len(t, job.Spec.Replicas, 2)
	assert.Equal(t, 1, job.Spec.Replicas["Master"].Replicas)
	assert.Equal(t, 3, job.Spec.Replicas["Worker"].Replicas)
	for role, r := range job.Spec.Replicas {
		assert.Equal(t, "Never", r.RestartPolicy, role)
		require.Len(t, r.Template.Spec.Containers, 1)
		c := r.Template.Spec.Containers[0]
		assert.Equal(t, "pytorch", c.Name)
		assert.Equal(t, "nvcr.io/nvidia/pytorch:25.01-py3", c.Image)
		assert.Equal(t, []string{"torchrun", "--nnodes=4", "--nproc-per-node=8", "--node-rank=$(RANK)", "--master-addr=$(MASTER_ADDR)",
			"--master-port=23456", "train.py", "$$(HOME)", "a$$b", "it's"}, c.Command)
		var env []string
		for _, e := range c.Env {
			env = append(env, e.Name+"="+e.Value)
		}
		assert.Equal(t, []string{"CUDA_DEVICE_ORDER=PCI_BUS_ID", "OMP_NUM_THREADS=1", "EXTRA=$$(X)"}, env)
		require.Len(t, c.Ports, 1)
		assert.Equal(t, "pytorchjob-port", c.Ports[0].Name)
		assert.Equal(t, 23456, c.Ports[0].ContainerPort)
		assert.Equal(t, map[string]int{"nvidia.com/gpu": 8}, c.Resources.Limits)
	}
	assert.Contains(t, b.String(), "# 3          three-module-4node-worker-2  24-31  language 24-31")

	t.Run("one node has no workers", func(t *testing.T) {
		p := build(t, nemotron, Options{LayoutArgs: true, Image: "img", Rendezvous: C10d})
		var b bytes.Buffer
		require.NoError(t, WriteK8s(&b, p))
		var job k8sJob
		require.NoError(t, yaml.Unmarshal(b.Bytes(), &job))
		assert.Equal(t, []string{"Master"}, keys(job.Spec.Replicas))
		assert.Contains(t, job.Metadata.Annotations["mimoplan/notes"], "not fixed")
		c := job.Spec.Replicas["Master"].Template.Spec.Containers[0]
		assert.Contains(t, c.Command, "--rdzv-endpoint=$(MASTER_ADDR):29500")
		assert.Contains(t, c.Command, "--mimo-llm-offset")
	})
	t.Run("needs an image", func(t *testing.T) {
		p.Image = ""
		assert.ErrorContains(t, WriteK8s(&bytes.Buffer{}, p), "--image")
	})
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestJSON(t *testing.T) {
	p := build(t, threeModule, Options{Hosts: hosts4, Program: []string{"train.py", "<&>"}, TopologyPath: "/t.json", Rendezvous: C10d})
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, p))
	assert.Contains(t, b.String(), `"<&>"`, "no HTML escaping")
	var got struct {
		Name         string     `json:"name"`
		Target       string     `json:"target"`
		WorldSize    int        `json:"world_size"`
		NNodes       int        `json:"nnodes"`
		NProcPerNode int        `json:"nproc_per_node"`
		Rendezvous   Rendezvous `json:"rendezvous"`
		Notes        []string   `json:"notes"`
		Nodes        []struct {
			NodeRank  int               `json:"node_rank"`
			Host      string            `json:"host"`
			FirstRank int               `json:"first_rank"`
			LastRank  int               `json:"last_rank"`
			Modules   []ModuleSpan      `json:"modules"`
			Command   []string          `json:"command"`
			Env       map[string]string `json:"env"`
		} `json:"nodes"`
	}
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&got))
	assert.Equal(t, "three-module-4node", got.Name)
	assert.Equal(t, "core", got.Target)
	assert.Equal(t, 32, got.WorldSize)
	assert.Equal(t, 4, got.NNodes)
	assert.Equal(t, 8, got.NProcPerNode)
	assert.Equal(t, Rendezvous{Backend: "c10d", MasterAddr: "h0", MasterPort: 29500, ID: "three-module-4node"}, got.Rendezvous)
	require.Len(t, got.Notes, 1)
	require.Len(t, got.Nodes, 4)
	for i, n := range got.Nodes {
		assert.Equal(t, i, n.NodeRank)
		assert.Equal(t, hosts4[i], n.Host)
		assert.Equal(t, 8*i, n.FirstRank)
		assert.Equal(t, 8*i+7, n.LastRank)
		assert.Equal(t, p.Nodes[i].Modules, n.Modules)
		assert.Equal(t, p.Nodes[i].Command, n.Command)
		assert.Equal(t, map[string]string{"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "OMP_NUM_THREADS": "1", "MIMOPLAN_TOPOLOGY": "/t.json"}, n.Env)
	}
}

func TestJobName(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"Three Module 4node", "-"}:    "three-module-4node",
		{"", "-"}:                      "mimoplan",
		{"--__--", "-"}:                "mimoplan",
		{"a_b.c", "_.-"}:               "a_b.c",
		{"a_b.c", "-"}:                 "a-b-c",
		{strings.Repeat("x", 80), "-"}: strings.Repeat("x", 40),
	} {
		assert.Equal(t, want, jobName(in[0], 40, in[1]), in[0])
	}
}

func TestK8sName(t *testing.T) {
	dns1035 := regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	for in, want := range map[string]string{
		"three-module-4node":                "three-module-4node",
		"8gpu-vlm":                          "mimoplan-8gpu-vlm",
		"4":                                 "mimoplan-4",
		"Nemotron_VLM.8gpu":                 "nemotron-vlm-8gpu",
		"":                                  "mimoplan",
		"__":                                "mimoplan",
		strings.Repeat("9", 80):             "mimoplan-" + strings.Repeat("9", 31),
		"x" + strings.Repeat("-", 50) + "y": "x",
	} {
		got := k8sName(in)
		assert.Equal(t, want, got, in)
		assert.Regexp(t, dns1035, got, in)
		assert.LessOrEqual(t, len(got+"-worker-9999"), 63, in)
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	assert.ErrorContains(t, Write(&bytes.Buffer{}, "xml", &Plan{}), `unknown plan format "xml"`)
	assert.Equal(t, os.FileMode(0o755), FileMode("sh"))
	assert.Equal(t, os.FileMode(0o755), FileMode("slurm"))
	assert.Equal(t, os.FileMode(0o644), FileMode("json"))
	assert.Equal(t, os.FileMode(0o644), FileMode("k8s"))
}
