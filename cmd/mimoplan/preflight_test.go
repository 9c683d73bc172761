package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/preflight"
)

func TestPreflight(t *testing.T) {
	g, b := writeLayout(t, good), writeLayout(t, bad)
	dir := filepath.Join(t.TempDir(), "pf")
	twoNodes := writeLayout(t, "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, tp: 2}\n")
	line := "torchrun --standalone --nproc-per-node=8 " + dir + "/preflight.py --plan " + dir + "/plan.json"
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"emit, the old name of --out", nil, []string{"preflight", g, "--emit", dir}, 0, line + " --bytes 67108864 --timeout 60 --iters 10\n", "wrote preflight.py and plan.json to " + dir},
		{"emit options", nil, []string{"preflight", g, "--out", dir, "--bytes", "1GiB", "--timeout", "90s", "--iters", "3", "--lazy-init"},
			0, line + " --bytes 1073741824 --timeout 90 --iters 3 --lazy-init\n", ""},
		{"emit from env", map[string]string{"MIMOPLAN_BYTES": "0", "MIMOPLAN_TIMEOUT": "2m"}, []string{"preflight", g, "--out", dir},
			0, line + " --bytes 0 --timeout 120 --iters 10\n", ""},
		{"entrypoint", nil, []string{"preflight", g, "--out", dir, "--entrypoint", "python3 -m torch.distributed.run"},
			0, "python3 -m torch.distributed.run --standalone", ""},
		{"nodes", nil, []string{"preflight", twoNodes, "--out", dir, "--hosts", "h0,h1", "--master-port", "7000"},
			0, "# node 1 (h1)\ntorchrun --nnodes=2 --nproc-per-node=4 --node-rank=1 --master-addr=h0 --master-port=7000 ", ""},
		{"nodes by master address", nil, []string{"preflight", twoNodes, "--out", dir, "--master-addr", "10.0.0.1"},
			0, "# node 0\ntorchrun --nnodes=2 --nproc-per-node=4 --node-rank=0 --master-addr=10.0.0.1 --master-port=29500 ", ""},
		{"nodes without hosts", nil, []string{"preflight", twoNodes, "--out", dir}, 2, "", "give the hosts or the master address"},
		{"nodes wrong host count", nil, []string{"preflight", twoNodes, "--out", dir, "--hosts", "h0"}, 1, "", "host-count-mismatch"},
		{"nodes empty host", nil, []string{"preflight", twoNodes, "--out", dir, "--hosts", "h0,,h1"}, 2, "", "--hosts has an empty host name"},
		{"run several nodes", nil, []string{"preflight", twoNodes, "--run"}, 2, "", "the layout has 2 nodes: use --out DIR"},
		{"neither emit nor run", nil, []string{"preflight", g}, 2, "", "needs --out DIR, --run, or both"},
		{"bad bytes", nil, []string{"preflight", g, "--out", dir, "--bytes", "lots"}, 2, "", "invalid --bytes"},
		{"bad timeout", nil, []string{"preflight", g, "--out", dir, "--timeout", "0s"}, 2, "", "timeout must be positive"},
		// One validation before anything runs: the payload would refuse
		// these only under torchrun, on every rank.
		{"bytes below one float32", nil, []string{"preflight", g, "--out", filepath.Join(dir, "b3"), "--bytes", "3"}, 2, "", "bytes must be 0 (no timing) or at least 4"},
		{"bytes below one float32, run", nil, []string{"preflight", g, "--run", "--bytes", "3"}, 2, "", "bytes must be 0 (no timing) or at least 4"},
		{"timeout not a duration", nil, []string{"preflight", g, "--out", dir, "--timeout", "inf"}, 2, "", "invalid --timeout \"inf\": want a duration such as 90s or 5m"},
		{"iters", nil, []string{"preflight", g, "--out", dir, "--iters", "0"}, 2, "", "iters must be 1 or more"},
		{"invalid layout", nil, []string{"preflight", b, "--out", dir}, 1, "", "error: module \"vision\""},
		{"missing layout", nil, []string{"preflight", filepath.Join(dir, "nope.yaml"), "--run"}, 2, "", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			code, out, errOut := mimoplan(t, tt.args...)
			assert.Equal(t, tt.code, code, "stdout: %s\nstderr: %s", out, errOut)
			assert.Contains(t, out, tt.stdout)
			assert.Contains(t, errOut, tt.stderr)
		})
	}
	assert.NoDirExists(t, filepath.Join(dir, "b3"), "refused before anything is written")
}

// TestPreflightPlanIsRender: the emitted plan is what render --format json
// prints, byte for byte, and so group for group.
func TestPreflightPlanIsRender(t *testing.T) {
	layouts, err := filepath.Glob("../../internal/preflight/testdata/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, layouts)
	layouts = append(layouts, writeLayout(t, good))
	for _, l := range layouts {
		t.Run(filepath.Base(l), func(t *testing.T) {
			dir := t.TempDir()
			code, _, errOut := mimoplan(t, "preflight", l, "--out", dir, "--master-addr", "10.0.0.1")
			require.Equal(t, 0, code, errOut)
			code, want, _ := mimoplan(t, "render", l, "--format", "json")
			require.Equal(t, 0, code)
			got, err := os.ReadFile(filepath.Join(dir, preflight.PlanFile))
			require.NoError(t, err)
			assert.Equal(t, want, string(got))
			var plan struct {
				Modules []struct {
					Groups map[string][][]int
				}
			}
			require.NoError(t, json.Unmarshal(got, &plan))
			for _, m := range plan.Modules {
				assert.GreaterOrEqual(t, len(m.Groups), 20, "every group kind")
			}
		})
	}
}

// TestPreflightNodeLines: on several nodes, each printed line is the
// command launch-plan gives that node, with the payload as its program.
func TestPreflightNodeLines(t *testing.T) {
	layout := "../../internal/preflight/testdata/two-nodes-2x2.yaml"
	dir := filepath.Join(t.TempDir(), "pf")
	code, out, errOut := mimoplan(t, "preflight", layout, "--out", dir, "--hosts", "h0,h1", "--master-port", "7000", "--bytes", "1MiB")
	require.Equal(t, 0, code, errOut)
	prog := []string{filepath.Join(dir, preflight.PayloadFile), "--plan", filepath.Join(dir, preflight.PlanFile),
		"--bytes", "1048576", "--timeout", "60", "--iters", "10"}
	code, js, errOut := mimoplan(t, append([]string{"launch-plan", layout, "--hosts", "h0,h1", "--master-port", "7000",
		"--format", "json", "--topology-out", filepath.Join(t.TempDir(), "topo.json"), "--"}, prog...)...)
	require.Equal(t, 0, code, errOut)
	var plan struct {
		Nodes []struct {
			NodeRank int    `json:"node_rank"`
			Host     string `json:"host"`
			Command  []string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(js), &plan))
	require.Len(t, plan.Nodes, 2)
	var want []string
	for _, n := range plan.Nodes {
		want = append(want, fmt.Sprintf("# node %d (%s)", n.NodeRank, n.Host), launch.QuoteArgv(n.Command))
	}
	assert.Equal(t, strings.Join(want, "\n")+"\n", out)
}

// TestPreflightNoFilesOnError: a layout or host problem leaves no files.
func TestPreflightNoFilesOnError(t *testing.T) {
	twoNodes := "../../internal/preflight/testdata/two-nodes-2x2.yaml"
	for _, args := range [][]string{
		{twoNodes, "--hosts", "h0"},
		{twoNodes},
		{writeLayout(t, bad)},
	} {
		dir := filepath.Join(t.TempDir(), "pf")
		code, _, errOut := mimoplan(t, append([]string{"preflight", "--out", dir}, args...)...)
		assert.NotEqual(t, 0, code, errOut)
		assert.NoDirExists(t, dir)
	}
}

// TestPreflightRun runs through --run with a stand-in for torchrun that
// checks the payload and plan exist when it starts and exits with $CODE.
func TestPreflightRun(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	g := writeLayout(t, good)
	fake := filepath.Join(t.TempDir(), "torchrun")
	// $3 is preflight.py and $5 plan.json, after --standalone --nproc-per-node=N.
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\ntest -s \"$3\" && test -s \"$5\" && echo files-ok\nexit \"$CODE\"\n"), 0o755))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	tests := []struct {
		name string
		code string
		want int
	}{
		{"every check passed", "0", 0},
		{"a check failed", "1", 1},
		{"status kept", "4", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CODE", tt.code)
			code, out, errOut := mimoplan(t, "preflight", g, "--run", "--entrypoint", fake)
			assert.Equal(t, tt.want, code, "stdout: %s\nstderr: %s", out, errOut)
			assert.Equal(t, "files-ok\n", out)
			assert.Contains(t, errOut, "+ "+fake+" --standalone --nproc-per-node=8 "+tmp)
			left, err := filepath.Glob(filepath.Join(tmp, "mimoplan-preflight-*"))
			require.NoError(t, err)
			assert.Empty(t, left, "the temporary payload directory is removed")
		})
	}
	code, _, errOut := mimoplan(t, "preflight", g, "--run", "--entrypoint", "/nonexistent/torchrun")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "cannot start /nonexistent/torchrun")
}

// TestPreflightRunLauncher: --run without --entrypoint uses torchrun, else
// python3 -m torch.distributed.run, and says so clearly when neither can
// run (exit 2), instead of a python3 failure that reads like a failed check.
func TestPreflightRunLauncher(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	g := writeLayout(t, good)
	t.Setenv("TMPDIR", t.TempDir())
	tests := []struct {
		name   string
		stubs  map[string]string
		code   int
		stdout string
		stderr string
	}{
		{"torchrun", map[string]string{"torchrun": `echo torchrun "$1" "$2"; exit 1`}, 1, "torchrun --standalone --nproc-per-node=8\n", "+ torchrun --standalone"},
		{"python3 with torch", map[string]string{"python3": `case "$2" in *find_spec*) exit 0;; esac; echo python3 "$1" "$2"`}, 0,
			"python3 -m torch.distributed.run\n", "+ python3 -m torch.distributed.run --standalone"},
		{"python3 without torch", map[string]string{"python3": "exit 1"}, 2, "", "torchrun is not on the PATH and python3 cannot import torch"},
		{"nothing", nil, 2, "", "install PyTorch here, or name the launcher with --entrypoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tt.stubs {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!"+sh+"\n"+body+"\n"), 0o755))
			}
			t.Setenv("PATH", dir)
			code, out, errOut := mimoplan(t, "preflight", g, "--run")
			assert.Equal(t, tt.code, code, "stdout: %s\nstderr: %s", out, errOut)
			assert.Equal(t, tt.stdout, out)
			assert.Contains(t, errOut, tt.stderr)
		})
	}
}

// TestPreflightEmitPlan: --emit DIR --format slurm|k8s|pytorchjob|sh
// writes one scheduler plan that runs the payload on every node, beside
// the payload and plan.json, instead of a line per node.
func TestPreflightEmitPlan(t *testing.T) {
	four := writeLayout(t, fourNode)
	dir := filepath.Join(t.TempDir(), "pf")
	code, out, stderr := mimoplan(t, "preflight", four, "--out", dir, "--format", "slurm", "--timeout", "30s")
	require.Equal(t, 0, code, stderr)
	abs, _ := filepath.Abs(dir)
	path := filepath.Join(abs, "preflight.slurm")
	assert.Equal(t, path+"\n", out)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(b)
	assert.Contains(t, s, "#SBATCH --nodes=4")
	assert.Contains(t, s, "srun --nodes=4")
	assert.Contains(t, s, filepath.Join(abs, "preflight.py")+" \\\n    --plan "+filepath.Join(abs, "plan.json")+" \\\n    --bytes 67108864 \\\n    --timeout 30")
	assert.FileExists(t, filepath.Join(abs, "preflight.py"))
	assert.FileExists(t, filepath.Join(abs, "plan.json"))
	if bash, err := exec.LookPath("bash"); err == nil {
		assert.NoError(t, exec.Command(bash, "-n", path).Run())
	}

	code, _, stderr = mimoplan(t, "preflight", four, "--out", dir, "--format", "k8s", "--image", "img")
	require.Equal(t, 0, code, stderr)
	y, err := os.ReadFile(filepath.Join(abs, "preflight.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(y), "kind: TrainJob")
	assert.Contains(t, string(y), "numNodes: 4")

	code, _, stderr = mimoplan(t, "preflight", four, "--out", dir, "--format", "sh", "--hosts", "h0,h1,h2,h3")
	require.Equal(t, 0, code, stderr)
	assert.FileExists(t, filepath.Join(abs, "preflight.sh"))

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", dir, "--format", "k8s"}, "needs --image"},
		{[]string{"--out", dir, "--format", "sh"}, "give their hosts with --hosts"},
		{[]string{"--run", "--format", "slurm"}, "with --out DIR, without --run"},
		{[]string{"--out", dir, "--format", "pbs"}, `invalid --format "pbs"`},
	} {
		code, _, stderr := mimoplan(t, append([]string{"preflight", four}, tc.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, tc.args)
	}
	empty := filepath.Join(t.TempDir(), "none")
	code, _, _ = mimoplan(t, "preflight", four, "--out", empty, "--format", "k8s")
	assert.Equal(t, 2, code)
	assert.NoDirExists(t, empty, "a refused plan writes nothing")
}

// preflight checks the layout at --target-version, as validate does.
func TestPreflightTargetVersion(t *testing.T) {
	mlm := writeLayout(t, megatronLM)
	code, _, stderr := mimoplan(t, "preflight", mlm, "--out", t.TempDir(), "--target-version", "2026-06-01")
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "[target-version-too-old]")
	code, _, stderr = mimoplan(t, "preflight", mlm, "--out", t.TempDir(), "--target-version", "soon")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "--target-version")
}
