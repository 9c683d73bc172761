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

const fourNode = `version: 1
name: three-module-4node
cluster:
  nodes: 4
  gpus_per_node: 8
modules:
  - {name: vision, num_ranks: 8, tp: 2}
  - {name: audio, num_ranks: 8}
  - {name: language, num_ranks: 16, tp: 4, pp: 2}
`

const megatronLM = `version: 1
name: nemotron-vlm-8gpu
target: megatron-lm
cluster: {nodes: 1, gpus_per_node: 8}
batch: {micro_batch_size: 1, global_batch_size: 8}
modules:
  - {name: vision, num_ranks: 4, tp: 2}
  - {name: language, num_ranks: 4, tp: 2, ep: 4}
training: {use_distributed_optimizer: true}
`

func writeFile(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	return p
}

func TestLaunchPlanExitCodes(t *testing.T) {
	t.Chdir(t.TempDir()) // default topology files land here
	four, mlm, broken := writeLayout(t, fourNode), writeLayout(t, megatronLM), writeLayout(t, bad)
	hostfile := writeFile(t, "hosts", "# four nodes\nh0 slots=8\nh1\nh2 slots=8\nh3\n")
	dupfile := writeFile(t, "hosts", "h0\nh1\n\nh0\nh3\n")
	slots := writeFile(t, "hosts", "h0 slots=4\nh1\nh2\nh3\n")
	junk := writeFile(t, "hosts", "h0 cpus=4\n")
	hosts := "--hosts=h0,h1,h2,h3"
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"sh", []string{"launch-plan", four, hosts, "--", "train.py"}, 0, `--node-rank="$node_rank"`, ""},
		{"sh carries the topology", []string{"launch-plan", four, hosts, "--", "train.py"}, 0, `export MIMOPLAN_TOPOLOGY="$job_dir/topology.json"`, ""},
		{"megatron-specs", []string{"launch-plan", four, "--format", "megatron-specs"}, 0, "def module_grid_specs(topology=None):", ""},
		{"pytorchjob", []string{"launch-plan", four, "--format", "pytorchjob", "--image", "img", "--", "train.py"}, 0, "kind: PyTorchJob", ""},
		{"pytorchjob and hosts", []string{"launch-plan", four, hosts, "--format", "pytorchjob", "--image", "i", "--", "x"}, 2, "", "--format pytorchjob: the training operator names the pods"},
		{"slurm directives", []string{"launch-plan", four, "--format", "slurm", "--sbatch", "partition=gpu", "--sbatch", "exclusive", "--cpus-per-task", "32", "--container-image", "nvcr.io#nvidia/pytorch:25.01-py3", "--", "t.py"}, 0, "#SBATCH --exclusive", ""},
		{"sbatch the plan sets", []string{"launch-plan", four, "--format", "slurm", "--sbatch", "nodes=8", "--", "t.py"}, 2, "", "the plan sets --nodes itself"},
		{"bad sbatch", []string{"launch-plan", four, "--format", "slurm", "--sbatch", "-p gpu", "--", "t.py"}, 2, "", "want KEY=VALUE or KEY"},
		{"bad cpus-per-task", []string{"launch-plan", four, "--format", "slurm", "--cpus-per-task", "-1", "--", "t.py"}, 2, "", "--cpus-per-task"},
		{"bad memory", []string{"launch-plan", four, "--format", "k8s", "--image", "i", "--memory", "lots", "--", "t.py"}, 2, "", `invalid --memory "lots"`},
		{"bad runtime", []string{"launch-plan", four, "--format", "k8s", "--image", "i", "--runtime", "Torch!", "--", "t.py"}, 2, "", `invalid --runtime "Torch!"`},
		{"hostfile", []string{"launch-plan", four, "--hostfile", hostfile, "--format", "json", "--", "train.py"}, 0, `"host": "h3"`, ""},
		{"megatron-lm needs no program", []string{"launch-plan", mlm, "--format", "json"}, 0, `"--mimo-llm-offset",`, ""},
		{"megatron-lm, plain names before PR #6894", []string{"launch-plan", mlm, "--format", "json", "--target-version", "2026-08-22"}, 0, `"--llm-offset",`, ""},
		{"megatron-lm, a PR number", []string{"launch-plan", mlm, "--format", "json", "--target-version", "#6570"}, 0, `"--llm-offset",`, ""},
		{"bad target version", []string{"launch-plan", mlm, "--target-version", "1.2"}, 2, "", `--target-version: target version "1.2" is not a date`},
		{"unknown PR", []string{"launch-plan", mlm, "--target-version", "1234"}, 2, "", "knows no change of PR #1234"},
		{"arguments without a program", []string{"launch-plan", mlm, "--", "--lr", "1e-4"}, 2, "", `"--lr" is an option`},
		{"slurm picks the hosts", []string{"launch-plan", four, "--format", "slurm", "--", "train.py"}, 0, "#SBATCH --nodes=4", ""},
		{"k8s", []string{"launch-plan", four, "--format", "k8s", "--image", "img", "--cpu", "32", "--memory", "512Gi", "--shm-size", "64Gi", "--", "train.py"}, 0, "kind: TrainJob", ""},
		{"c10d", []string{"launch-plan", four, hosts, "--rendezvous", "c10d", "--", "train.py"}, 0, "--rdzv-endpoint=h0:29500", ""},

		{"invalid layout", []string{"launch-plan", broken, "--", "x"}, 1, "", "[dense-not-divisible]"},
		{"host count", []string{"launch-plan", four, "--hosts", "h0,h1", "--", "x"}, 1, "", ":4:10: error: --hosts gives 2 host(s), but cluster.nodes is 4 [host-count-mismatch]"},
		{"loopback", []string{"launch-plan", four, "--hosts", "localhost,h1,h2,h3", "--", "x"}, 1, "", "[loopback-rendezvous]"},
		{"loopback master", []string{"launch-plan", four, hosts, "--master-addr", "127.0.0.1", "--", "x"}, 1, "", "[loopback-rendezvous]"},
		{"duplicate host", []string{"launch-plan", four, "--hostfile", dupfile, "--", "x"}, 1, "", `host "h0" is node 0 (` + dupfile + `:1) and again node 2 (` + dupfile + `:4) [duplicate-host]`},
		{"loopback, short form", []string{"launch-plan", four, hosts, "--master-addr", "127.1", "--", "x"}, 1, "", `"127.1" is a loopback`},
		{"static master not the first host", []string{"launch-plan", four, hosts, "--master-addr", "h2", "--", "x"}, 1, "", "[master-not-first-host]"},
		{"port", []string{"launch-plan", four, hosts, "--master-port", "0", "--", "x"}, 2, "", `invalid --master-port "0": want a decimal port in 1-65535`},
		{"port too high", []string{"launch-plan", four, hosts, "--master-port", "65536", "--", "x"}, 2, "", `invalid --master-port "65536"`},
		{"slots", []string{"launch-plan", four, "--hostfile", slots, "--", "x"}, 1, "", "line 1: host h0 has slots=4"},

		{"hosts and hostfile", []string{"launch-plan", four, hosts, "--hostfile", hostfile, "--", "x"}, 2, "", "[hosts hostfile] are set none of the others can be"},
		{"no hosts", []string{"launch-plan", four, "--", "x"}, 2, "", "the layout has 4 nodes: give their hosts"},
		{"no hosts, json", []string{"launch-plan", four, "--format", "json", "--", "x"}, 2, "", "--hosts or --hostfile"},
		{"unreadable hostfile", []string{"launch-plan", four, "--hostfile", filepath.Join(t.TempDir(), "nope"), "--", "x"}, 2, "", "read hostfile"},
		{"malformed hostfile", []string{"launch-plan", four, "--hostfile", junk, "--", "x"}, 2, "", `line 1: unexpected "cpus=4"`},
		{"bad env", []string{"launch-plan", four, hosts, "--env", "NOEQUALS", "--", "x"}, 2, "", `invalid --env "NOEQUALS"`},
		{"bad env name", []string{"launch-plan", four, hosts, "--env", "1X=2", "--", "x"}, 2, "", `"1X" is not a valid name`},
		{"env torchrun sets", []string{"launch-plan", four, "--format", "slurm", "--env", "MASTER_ADDR=login1", "--", "x"}, 2, "", "MASTER_ADDR is set by torchrun"},
		{"out over the layout", []string{"launch-plan", four, hosts, "--out", four, "--", "x"}, 2, "", "is the layout file"},
		{"topology over the layout", []string{"launch-plan", four, hosts, "--topology-out", four, "--", "x"}, 2, "", "is the layout file"},
		{"topology and plan one file", []string{"launch-plan", four, hosts, "--out", "p.sh", "--topology-out", "./p.sh", "--", "x"}, 2, "", "--topology-out and --out are the same file"},
		{"empty host", []string{"launch-plan", four, "--hosts", "h0,,h2,h3", "--", "x"}, 2, "", "empty host name"},
		{"odd host", []string{"launch-plan", four, "--hosts", "h0,h$1,h2,h3", "--", "x"}, 2, "", `host 1 "h$1"`},
		{"host like an option", []string{"launch-plan", four, "--hosts", "h0,h1,-h2,h3", "--", "x"}, 2, "", `host 2 "-h2" is not a host name`},
		{"master with a zone", []string{"launch-plan", four, hosts, "--master-addr", "fe80::1%eth0", "--", "x"}, 2, "", "IPv6 zone"},
		{"bad format", []string{"launch-plan", four, hosts, "--format", "pbs", "--", "x"}, 2, "", `invalid --format "pbs"`},
		{"bad rendezvous", []string{"launch-plan", four, hosts, "--rendezvous", "etcd", "--", "x"}, 2, "", `invalid --rendezvous "etcd"`},
		{"k8s and hosts", []string{"launch-plan", four, hosts, "--format", "k8s", "--image", "i", "--", "x"}, 2, "", "drop --hosts"},
		{"k8s without image", []string{"launch-plan", four, "--format", "k8s", "--", "x"}, 2, "", "needs --image"},
		{"no program", []string{"launch-plan", four, hosts}, 2, "", "target core has no default program"},
		{"two layouts", []string{"launch-plan", four, four, "--", "x"}, 2, "", "takes one LAYOUT"},
		{"no layout", []string{"launch-plan"}, 2, "", "takes one LAYOUT"},
		{"omp", []string{"launch-plan", four, hosts, "--omp-num-threads", "0", "--", "x"}, 2, "", "--omp-num-threads"},
		{"missing layout", []string{"launch-plan", filepath.Join(t.TempDir(), "no.yaml"), "--", "x"}, 2, "", "no such file"},
		{"layout flag twice", []string{"launch-plan", mlm, "--target-version", "6570", "--", "p.py", "--llm-tp", "2"}, 2, "", "already set --llm-tp"},
		{"--mimo-* layout flag twice", []string{"launch-plan", mlm, "--", "p.py", "--mimo-llm-tp=2"}, 2, "", "already set --mimo-llm-tp"},
		{"--mimo-* name before PR #6894", []string{"launch-plan", mlm, "--target-version", "2026-08-01", "--", "p.py", "--mimo-llm-tp", "2"}, 2, "", "give the target_version (--target-version) of your Megatron-LM checkout"},
		{"plain name since PR #6894", []string{"launch-plan", mlm, "--", "p.py", "--llm-tp", "2"}, 2, "", "names the grid arguments since Megatron-LM PR #6894 (--mimo-llm-tp...)"},
		{"the --mimo-arg-names flag is gone", []string{"launch-plan", mlm, "--mimo-arg-names"}, 2, "", "unknown flag: --mimo-arg-names"},
		{"old flag is gone", []string{"launch-plan", mlm, "--legacy-layout-args"}, 2, "", "unknown flag: --legacy-layout-args"},
		{"unwritable out", []string{"launch-plan", four, hosts, "--topology-out", filepath.Join(t.TempDir(), "t.json"), "--out", filepath.Join(t.TempDir(), "no", "plan.sh"), "--", "x"}, 2, "", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := mimoplan(t, tt.args...)
			assert.Equal(t, tt.code, code, "stdout: %s\nstderr: %s", out, errOut)
			assert.Contains(t, out, tt.stdout)
			assert.Contains(t, errOut, tt.stderr)
			if code != 0 {
				assert.Empty(t, out, "nothing on stdout when no plan is made")
			}
		})
	}
}

func TestLaunchPlanOut(t *testing.T) {
	four := writeLayout(t, fourNode)
	dir := t.TempDir()
	out := filepath.Join(dir, "plan.sh")
	code, stdout, stderr := mimoplan(t, "launch-plan", four, "--hosts", "h0,h1,h2,h3", "--out", out, "--", "train.py", "it's")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout)
	st, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm())
	b, _ := os.ReadFile(out)
	assert.Contains(t, string(b), `'it'\''s'`)

	// The plan carries the topology; nothing is written beside it.
	assert.Contains(t, string(b), `export MIMOPLAN_TOPOLOGY="$job_dir/topology.json"`)
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "the plan only")

	// --topology-out writes the topology there, which the plan names.
	topo := filepath.Join(dir, "plan.topology.json")
	code, _, stderr = mimoplan(t, "launch-plan", four, "--hosts", "h0,h1,h2,h3", "--out", out, "--topology-out", topo, "--", "train.py", "it's")
	require.Equal(t, 0, code, stderr)
	b, _ = os.ReadFile(out)
	assert.Contains(t, string(b), "export MIMOPLAN_TOPOLOGY="+topo+"\n")
	assert.NotContains(t, string(b), "job_dir")
	got, err := os.ReadFile(topo)
	require.NoError(t, err)
	_, want, _ := mimoplan(t, "launch-plan", four, "--hosts", "h0,h1,h2,h3", "--format", "json", "--", "x")
	var plan struct {
		Topology json.RawMessage `json:"topology"`
	}
	require.NoError(t, json.Unmarshal([]byte(want), &plan))
	var a, c any
	require.NoError(t, json.Unmarshal(got, &a))
	require.NoError(t, json.Unmarshal(plan.Topology, &c))
	assert.Equal(t, c, a, "the file is the topology the plans carry")

	// A refused plan writes nothing, and leaves an older plan alone.
	code, _, _ = mimoplan(t, "launch-plan", four, "--hosts", "h0,h1", "--out", out, "--", "other.py")
	assert.Equal(t, 1, code)
	b2, _ := os.ReadFile(out)
	assert.Equal(t, b, b2)
	entries, _ = os.ReadDir(dir)
	assert.Len(t, entries, 2, "plan and topology, no temporary files")

	// JSON plans are not executable.
	jout := filepath.Join(dir, "plan.json")
	code, _, stderr = mimoplan(t, "launch-plan", four, "--hosts", "h0,h1,h2,h3", "--format", "json", "--out", jout, "--topology-out", filepath.Join(dir, "t.json"), "--", "x")
	require.Equal(t, 0, code, stderr)
	st, _ = os.Stat(jout)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
}

// TestLaunchPlanKeepsTheLayout: a plan whose topology path is the layout
// file itself is refused before anything is written.
func TestLaunchPlanKeepsTheLayout(t *testing.T) {
	dir := t.TempDir()
	l := filepath.Join(dir, "a.topology.json")
	require.NoError(t, os.WriteFile(l, []byte(fourNode), 0o644))
	code, _, stderr := mimoplan(t, "launch-plan", l, "--hosts", "h0,h1,h2,h3", "--out", filepath.Join(dir, "a.json"), "--topology-out", l, "--", "x")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "the topology file "+l+" is the layout file")
	b, _ := os.ReadFile(l)
	assert.Equal(t, fourNode, string(b))
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1)
}

func TestLaunchPlanJSON(t *testing.T) {
	t.Chdir(t.TempDir())
	mlm := writeLayout(t, megatronLM)
	code, out, stderr := mimoplan(t, "launch-plan", mlm, "--format", "json", "--env", "NCCL_DEBUG=INFO", "--omp-num-threads", "8", "--master-port", "6000")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr, "megatron-lm with layout arguments needs no topology file")
	var plan struct {
		WorldSize  int `json:"world_size"`
		Rendezvous struct {
			MasterAddr string `json:"master_addr"`
			MasterPort int    `json:"master_port"`
		} `json:"rendezvous"`
		Env   map[string]string `json:"env"`
		Nodes []struct {
			Command []string `json:"command"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &plan))
	assert.Equal(t, 8, plan.WorldSize)
	assert.Equal(t, "localhost", plan.Rendezvous.MasterAddr)
	assert.Equal(t, 6000, plan.Rendezvous.MasterPort)
	require.Len(t, plan.Nodes, 1)
	assert.Equal(t, strings.Fields("torchrun --nnodes=1 --nproc-per-node=8 --node-rank=0 --master-addr=localhost --master-port=6000 "+
		"examples/mimo/pretrain_mimo.py --mimo-encoder-tp 2 --mimo-encoder-dp 2 --mimo-llm-offset 4 --mimo-llm-tp 2 --mimo-llm-cp 1 "+
		"--mimo-llm-pp 1 --mimo-llm-dp 2 --mimo-llm-ep 4 --mimo-llm-expt-tp 1 --micro-batch-size 1 --global-batch-size 8 --use-distributed-optimizer"), plan.Nodes[0].Command)
	assert.Equal(t, map[string]string{"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "OMP_NUM_THREADS": "8", "NCCL_DEBUG": "INFO"}, plan.Env)

	// --target-version, also from the environment, gives the names of
	// that version: the plain ones before PR #6894.
	wantPlain := strings.Fields("torchrun --nnodes=1 --nproc-per-node=8 --node-rank=0 --master-addr=localhost --master-port=29500 " +
		"examples/mimo/pretrain_mimo.py --encoder-tp 2 --encoder-dp 2 --llm-offset 4 --llm-tp 2 --llm-cp 1 " +
		"--llm-pp 1 --llm-dp 2 --llm-ep 4 --llm-expt-tp 1 --micro-batch-size 1 --global-batch-size 8 --use-distributed-optimizer")
	for _, env := range []string{"", "2026-08-22"} {
		t.Setenv("MIMOPLAN_TARGET_VERSION", env)
		args := []string{"launch-plan", mlm, "--format", "json"}
		if env == "" {
			args = append(args, "--target-version", "6570")
		}
		code, out, stderr = mimoplan(t, args...)
		require.Equal(t, 0, code, stderr)
		require.NoError(t, json.Unmarshal([]byte(out), &plan))
		assert.Equal(t, wantPlain, plan.Nodes[0].Command, "MIMOPLAN_TARGET_VERSION=%q", env)
	}
	t.Setenv("MIMOPLAN_TARGET_VERSION", "")

	// Without the layout arguments the program gets the topology instead,
	// carried by the plan: no file is written.
	code, out, stderr = mimoplan(t, "launch-plan", mlm, "--format", "json", "--no-layout-args", "--", "mine.py")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `"topology": {`)
	assert.NotContains(t, out, "llm-tp")
	entries, _ := os.ReadDir(".")
	assert.Empty(t, entries, "nothing written in the current directory")
}

func TestLaunchPlanEnvironment(t *testing.T) {
	t.Chdir(t.TempDir())
	four := writeLayout(t, fourNode)
	t.Setenv("MIMOPLAN_HOSTS", "n0,n1,n2,n3")
	t.Setenv("MIMOPLAN_MASTER_PORT", "7000")
	t.Setenv("MIMOPLAN_FORMAT", "json")
	code, out, stderr := mimoplan(t, "launch-plan", four, "--", "x")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `"--master-addr=n0"`)
	assert.Contains(t, out, `"--master-port=7000"`)
	// The port is decimal, from the environment as from the flag; a bad
	// one is a usage error that names the variable (issue 22).
	for env, want := range map[string]string{"010": `"--master-port=10"`, "0x1f90": `mimoplan: invalid MIMOPLAN_MASTER_PORT="0x1f90" (for --master-port): want a decimal port in 1-65535`,
		"abc": `invalid MIMOPLAN_MASTER_PORT="abc"`, "65536": `mimoplan: invalid MIMOPLAN_MASTER_PORT="65536" (for --master-port): want a decimal port in 1-65535`,
		"99999": `mimoplan: invalid MIMOPLAN_MASTER_PORT="99999" (for --master-port)`} {
		t.Setenv("MIMOPLAN_MASTER_PORT", env)
		code, out, stderr := mimoplan(t, "launch-plan", four, "--", "x")
		if strings.HasPrefix(want, `"--`) {
			assert.Equal(t, 0, code, stderr)
			assert.Contains(t, out, want)
			continue
		}
		assert.Equal(t, 2, code, "MIMOPLAN_MASTER_PORT=%s: a configuration error", env)
		assert.Empty(t, out)
		assert.Contains(t, stderr, want)
	}
	code, _, stderr = mimoplan(t, "launch-plan", four, "--master-port", "0x10", "--", "x")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `mimoplan: invalid --master-port "0x10": want a decimal port in 1-65535`)
	t.Setenv("MIMOPLAN_MASTER_PORT", "7000")

	// The command line wins over the environment.
	code, out, _ = mimoplan(t, "launch-plan", four, "--format", "sh", "--master-port", "7001", "--", "x")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "--master-port=7001")
}

func TestLaunchPlanWarnings(t *testing.T) {
	l := writeLayout(t, "version: 1\ncluster: {nodes: 2, gpus_per_node: 2}\nmodules:\n- {name: language, num_ranks: 4, tp: 4}\n")
	code, _, stderr := mimoplan(t, "launch-plan", l, "--hosts", "a,b", "--topology-out", filepath.Join(t.TempDir(), "t.json"), "--", "x")
	assert.Equal(t, 0, code)
	assert.Contains(t, stderr, "warning:")
	assert.Contains(t, stderr, "[group-crosses-node]")
}

// TestLaunchDocExamples keeps every example of docs/launch.md in step with
// the binary: the four formats of the worked example, the c10d plan, the
// tail of the megatron-lm plan in both name sets, and the refusals, run
// from the repository's root as the doc runs them. The c10d example's
// topology sits in /mnt/shared/mimoplan; here it goes to a temporary
// directory and --env puts the documented path back.
func TestLaunchDocExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(root, "docs", "launch.md"))
	require.NoError(t, err)
	blocks := docBlocks(string(raw))
	hostfile := filepath.Join("testdata", "launch", "hosts.txt")
	t.Chdir(root)
	prog := []string{"--", "train.py", "--data", "/mnt/shared/data", "--run-name", "first try"}
	// A shared topology file, named as the doc names it.
	shared := []string{"--topology-out", filepath.Join(t.TempDir(), "t.json"), "--env", "MIMOPLAN_TOPOLOGY=/mnt/shared/mimoplan/plan.topology.json"}
	tests := []struct {
		name string
		args []string
	}{
		{"sh", append([]string{"--hostfile", hostfile}, prog...)},
		{"json", append([]string{"--hostfile", hostfile, "--format", "json"}, prog...)},
		{"slurm", append([]string{"--format", "slurm", "--sbatch", "partition=gpu", "--sbatch", "time=04:00:00", "--cpus-per-task", "64"}, prog...)},
		{"k8s", append([]string{"--format", "k8s", "--image", "nvcr.io/nvidia/pytorch:25.01-py3", "--cpu", "64", "--memory", "512Gi"}, prog...)},
		{"pytorchjob", append([]string{"--format", "pytorchjob", "--image", "nvcr.io/nvidia/pytorch:25.01-py3"}, prog...)},
		{"megatron-specs", []string{"--format", "megatron-specs"}},
		{"c10d", append(shared, "--hostfile", hostfile, "--rendezvous", "c10d", "--", "train.py")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"launch-plan", "layouts/three-module-4node.yaml"}, tt.args...)
			code, out, stderr := mimoplan(t, args...)
			require.Equal(t, 0, code, stderr)
			assertDocBlock(t, blocks, out)
		})
	}

	t.Run("megatron-lm", func(t *testing.T) {
		code, out, stderr := mimoplan(t, "launch-plan", "layouts/llm-only-moe-16gpu.yaml", "--hosts", "node0,node1",
			"--", "examples/mimo/pretrain_mimo.py", "--lr", "1e-4")
		require.Equal(t, 0, code, stderr)
		_, tail, ok := strings.Cut(out, "\nexec torchrun")
		require.True(t, ok, out)
		want := "$ mimoplan launch-plan layouts/llm-only-moe-16gpu.yaml --hosts node0,node1 \\\n" +
			"    -- examples/mimo/pretrain_mimo.py --lr 1e-4\n...\nexec torchrun" + tail
		assertDocBlock(t, blocks, want)

		code, out, stderr = mimoplan(t, "launch-plan", "layouts/llm-only-moe-16gpu.yaml", "--hosts", "node0,node1", "--target-version", "2026-08-22",
			"--", "examples/mimo/pretrain_mimo.py", "--lr", "1e-4")
		require.Equal(t, 0, code, stderr)
		_, tail, ok = strings.Cut(out, "\n  examples/mimo/pretrain_mimo.py")
		require.True(t, ok, out)
		want = "$ mimoplan launch-plan layouts/llm-only-moe-16gpu.yaml --hosts node0,node1 --target-version 2026-08-22 \\\n" +
			"    -- examples/mimo/pretrain_mimo.py --lr 1e-4\n...\n  examples/mimo/pretrain_mimo.py" + tail
		assertDocBlock(t, blocks, want)

		// A program argument against the layout's training block.
		code, out, stderr = mimoplan(t, "launch-plan", "layouts/llm-only-moe-16gpu.yaml", "--hosts", "node0,node1",
			"--", "examples/mimo/pretrain_mimo.py", "--recompute-granularity", "full")
		require.Equal(t, 1, code, stderr)
		assert.Empty(t, out)
		assertDocBlock(t, blocks, "$ mimoplan launch-plan layouts/llm-only-moe-16gpu.yaml --hosts node0,node1 -- examples/mimo/pretrain_mimo.py --recompute-granularity full   # exit 1\n"+stderr)
	})

	t.Run("refusals", func(t *testing.T) {
		var want strings.Builder
		for _, args := range [][]string{
			{"--hosts", "node0,node1,node2"},
			{"--hosts", "localhost,node1,node1,node3"},
		} {
			args = append(append([]string{"launch-plan", "layouts/three-module-4node.yaml"}, args...), "--", "train.py")
			code, out, stderr := mimoplan(t, args...)
			require.Equal(t, 1, code, stderr)
			assert.Empty(t, out)
			want.WriteString("$ mimoplan " + strings.Join(args, " ") + "   # exit 1\n" + stderr)
		}
		assertDocBlock(t, blocks, want.String())
	})
}

// docBlocks returns the contents of the fenced code blocks of a Markdown
// document, each with its final newline.
func docBlocks(doc string) []string {
	var blocks []string
	var b strings.Builder
	in := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			if in {
				blocks = append(blocks, b.String())
				b.Reset()
			}
			in = !in
			continue
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return blocks
}

// assertDocBlock finds want among the blocks; failing that, it compares
// want with the block that starts with the same line, for a readable diff.
func assertDocBlock(t *testing.T, blocks []string, want string) {
	t.Helper()
	first, _, _ := strings.Cut(want, "\n")
	var near string
	for _, b := range blocks {
		if b == want {
			return
		}
		if strings.HasPrefix(b, first+"\n") && near == "" {
			near = b
		}
	}
	if near == "" {
		t.Errorf("docs/launch.md has no block starting %q; the binary writes:\n%s", first, want)
		return
	}
	assert.Equal(t, want, near, "docs/launch.md is out of step with the binary")
}

// A plan's comments name the file it is written to: --out's for
// launch-plan, preflight.sh or preflight.slurm for preflight --format;
// plan.sh and plan.slurm on standard output.
func TestPlanNamesItsFile(t *testing.T) {
	layoutPath := filepath.Join("..", "..", "layouts", "three-module-4node.yaml")
	dir := t.TempDir()
	tests := []struct {
		name, file string
		args       []string
		want       string
	}{
		{"slurm --out", filepath.Join(dir, "job.sbatch"), []string{"launch-plan", layoutPath, "--format", "slurm", "--out", filepath.Join(dir, "job.sbatch"), "--", "train.py"},
			"# Submit it with: sbatch job.sbatch\n"},
		{"sh --out", filepath.Join(dir, "run-job.sh"), []string{"launch-plan", layoutPath, "--hosts", "a,b,c,d", "--out", filepath.Join(dir, "run-job.sh"), "--", "train.py"},
			"#   ./run-job.sh NODE_RANK    or    NODE_RANK=i ./run-job.sh\n# or, on a host named as below, ./run-job.sh alone"},
		{"c10d --out", filepath.Join(dir, "c10d.sh"), []string{"launch-plan", layoutPath, "--hosts", "a,b,c,d", "--rendezvous", "c10d", "--out", filepath.Join(dir, "c10d.sh"), "--", "train.py"},
			"# Run it on every host: ./c10d.sh\n"},
		{"slurm stdout", "", []string{"launch-plan", layoutPath, "--format", "slurm", "--", "train.py"}, "# Submit it with: sbatch plan.slurm\n"},
		{"preflight slurm", filepath.Join(dir, "pf", "preflight.slurm"), []string{"preflight", layoutPath, "--out", filepath.Join(dir, "pf"), "--format", "slurm", "--sbatch", "partition=gpu"},
			"# Submit it with: sbatch preflight.slurm\n"},
		{"preflight sh", filepath.Join(dir, "pf2", "preflight.sh"), []string{"preflight", layoutPath, "--out", filepath.Join(dir, "pf2"), "--format", "sh", "--hosts", "a,b,c,d"},
			"#   ./preflight.sh NODE_RANK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := mimoplan(t, tt.args...)
			require.Equal(t, exitOK, code, stderr)
			plan := stdout
			if tt.file != "" {
				b, err := os.ReadFile(tt.file)
				require.NoError(t, err)
				plan = string(b)
			}
			assert.Contains(t, plan, tt.want)
			if tt.file != "" {
				assert.NotContains(t, plan, "plan.slurm")
				assert.NotContains(t, plan, "plan.sh")
			}
		})
	}
	// preflight --sbatch lands in the slurm plan.
	b, err := os.ReadFile(filepath.Join(dir, "pf", "preflight.slurm"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "\n#SBATCH --partition=gpu\n")
	code, _, stderr := mimoplan(t, "preflight", layoutPath, "--out", filepath.Join(dir, "pf3"), "--sbatch", "partition=gpu")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "mimoplan: --sbatch is for --format slurm, not lines\n", stderr)
}
