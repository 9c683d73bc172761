package preflight_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/preflight"
	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func load(t *testing.T, path string) *validate.Result {
	t.Helper()
	res, err := validate.Load(path)
	require.NoError(t, err)
	require.True(t, res.Valid(false), "%s is not valid: %v", path, res.Diags)
	return res
}

func planOf(t *testing.T, res *validate.Result) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, render.JSON(&b, res.Topology))
	return b.Bytes()
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func TestEmit(t *testing.T) {
	plan := planOf(t, load(t, "testdata/nonco-4gpu.yaml"))
	tmp := t.TempDir()
	blocker := writeFile(t, tmp, "file", "x")
	tests := []struct {
		name    string
		dir     string
		plan    []byte
		wantErr string
	}{
		{"new nested dir", filepath.Join(tmp, "a", "b"), plan, ""},
		{"existing dir", tmp, plan, ""},
		{"not JSON", filepath.Join(tmp, "bad"), []byte("{"), "not valid JSON"},
		{"dir is a file", filepath.Join(blocker, "sub"), plan, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := preflight.Emit(tt.dir, tt.plan)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.NoFileExists(t, filepath.Join(tt.dir, preflight.PlanFile))
				return
			}
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(tt.dir, preflight.PayloadFile))
			require.NoError(t, err)
			assert.Equal(t, preflight.Payload, got)
			got, err = os.ReadFile(filepath.Join(tt.dir, preflight.PlanFile))
			require.NoError(t, err)
			assert.Equal(t, tt.plan, got)
		})
	}
}

func TestPayloadEmbedded(t *testing.T) {
	disk, err := os.ReadFile("payload/preflight.py")
	require.NoError(t, err)
	assert.Equal(t, disk, preflight.Payload)
	assert.Contains(t, string(preflight.Payload), "def main(")
}

func TestStandalone(t *testing.T) {
	tests := []struct {
		name    string
		nproc   int
		o       preflight.Options
		want    string
		wantErr string
	}{
		{"defaults", 4, preflight.Options{Dir: "pf", Bytes: preflight.DefaultBytes},
			"torchrun --standalone --nproc-per-node=4 pf/preflight.py --plan pf/plan.json --bytes 67108864 --timeout 60 --iters 10", ""},
		{"all options", 2, preflight.Options{Dir: "/tmp/a b", Bytes: 0, Timeout: 1500 * time.Millisecond, Iters: 3, LazyInit: true,
			Launcher: []string{"python3", "-m", "torch.distributed.run"}},
			"python3 -m torch.distributed.run --standalone --nproc-per-node=2 '/tmp/a b/preflight.py' --plan '/tmp/a b/plan.json' --bytes 0 --timeout 1.5 --iters 3 --lazy-init", ""},
		{"no gpus", 0, preflight.Options{Dir: "pf"}, "", "nproc-per-node must be 1 or more"},
		{"negative bytes", 1, preflight.Options{Dir: "pf", Bytes: -1}, "", "bytes must be 0 (no timing) or at least 4"},
		{"bytes below one float32", 1, preflight.Options{Dir: "pf", Bytes: 3}, "", "got 3"},
		{"negative timeout", 1, preflight.Options{Dir: "pf", Timeout: -time.Second}, "", "timeout must be positive"},
		{"negative iters", 1, preflight.Options{Dir: "pf", Iters: -2}, "", "iters must be 1 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, err := preflight.Standalone(tt.nproc, tt.o)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, preflight.Line(argv))
		})
	}
}

func TestNodes(t *testing.T) {
	dir := t.TempDir()
	twoNodes := writeFile(t, dir, "two.yaml", `version: 1
name: two
cluster: {nodes: 2, gpus_per_node: 2}
modules:
  - {name: vision, num_ranks: 2, rank_offset: 0, tp: 2}
  - {name: language, num_ranks: 2, rank_offset: 2, tp: 2}
`)
	oneNode := writeFile(t, dir, "one.yaml", `version: 1
cluster: {nodes: 1, gpus_per_node: 8}
modules:
  - {name: language, num_ranks: 8, tp: 8}
`)
	o := preflight.Options{Dir: "pf", Bytes: 1 << 20}
	prog := "pf/preflight.py --plan pf/plan.json --bytes 1048576 --timeout 60 --iters 10"
	tests := []struct {
		name     string
		layout   string
		lo       launch.Options
		want     []string // "host: line"
		wantErr  string
		wantDiag string
	}{
		{"no cluster: one node with every rank", "testdata/nonco-4gpu.yaml", launch.Options{},
			[]string{"localhost: torchrun --standalone --nproc-per-node=4 " + prog}, "", ""},
		{"one-node cluster", oneNode, launch.Options{MasterPort: 1},
			[]string{"localhost: torchrun --standalone --nproc-per-node=8 " + prog}, "", ""},
		{"hosts", twoNodes, launch.Options{Hosts: []string{"h0", "h1"}, MasterPort: 29500}, []string{
			"h0: torchrun --nnodes=2 --nproc-per-node=2 --node-rank=0 --master-addr=h0 --master-port=29500 " + prog,
			"h1: torchrun --nnodes=2 --nproc-per-node=2 --node-rank=1 --master-addr=h0 --master-port=29500 " + prog,
		}, "", ""},
		{"master address only", twoNodes, launch.Options{MasterAddr: "10.0.0.1", MasterPort: 6000}, []string{
			": torchrun --nnodes=2 --nproc-per-node=2 --node-rank=0 --master-addr=10.0.0.1 --master-port=6000 " + prog,
			": torchrun --nnodes=2 --nproc-per-node=2 --node-rank=1 --master-addr=10.0.0.1 --master-port=6000 " + prog,
		}, "", ""},
		{"neither", twoNodes, launch.Options{MasterPort: 29500}, nil, "the layout has 2 nodes: give the hosts or the master address", ""},
		{"wrong host count", twoNodes, launch.Options{Hosts: []string{"h0"}, MasterPort: 29500}, nil, "", "gives 1 host(s), but cluster.nodes is 2"},
		{"bad port", twoNodes, launch.Options{Hosts: []string{"h0", "h1"}, MasterPort: 0}, nil, "", "master port 0 is outside 1-65535"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes, d, err := preflight.Nodes(load(t, tt.layout).Topology, tt.lo, o)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.wantDiag != "" {
				require.True(t, d.HasErrors())
				var b bytes.Buffer
				require.NoError(t, diag.WriteText(&b, d))
				assert.Contains(t, b.String(), tt.wantDiag)
				assert.Nil(t, nodes)
				return
			}
			assert.False(t, d.HasErrors())
			var got []string
			for i, n := range nodes {
				assert.Equal(t, i, n.NodeRank)
				got = append(got, n.Host+": "+preflight.Line(n.Argv))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRun(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	tests := []struct {
		name    string
		argv    []string
		code    int
		stdout  string
		stderr  string
		wantErr string
	}{
		{"passes", []string{"sh", "-c", "echo table; exit 0"}, 0, "table\n", "", ""},
		{"check failed", []string{"sh", "-c", "echo FAILED >&2; exit 1"}, 1, "", "FAILED\n", ""},
		{"other status kept", []string{"sh", "-c", "exit 3"}, 3, "", "", ""},
		{"killed", []string{"sh", "-c", "kill -9 $$"}, 128 + 9, "", "", ""},
		{"missing program", []string{"/nonexistent/torchrun"}, 0, "", "", "no such file"},
		{"empty", nil, 0, "", "", "empty command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code, err := preflight.Run(context.Background(), tt.argv, &out, &errb)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.code, code)
			assert.Equal(t, tt.stdout, out.String())
			assert.Equal(t, tt.stderr, errb.String())
		})
	}
}

// TestRunSignals: a signal this process receives is passed on to the
// launcher, which is waited for; an interrupted run ends with 128+N.
func TestRunSignals(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	const grace = 2 * time.Second // for the SIGKILL case; KillGrace is 40 s
	// signalHang bounds the wait for a launcher that was never stopped: a
	// hang bound, not a speed check, far above grace plus a loaded
	// machine's start of sh.
	const signalHang = 60 * time.Second
	tests := []struct {
		name   string
		trap   string // the launcher's handling of SIGTERM
		signal bool   // send SIGTERM to Run (else end its context)
		want   int
	}{
		{"passed on, launcher stops with 1", `trap "exit 1" TERM`, true, 128 + 15},
		{"passed on, launcher dies of it", "", true, 128 + 15},
		{"context ends: SIGTERM", `trap "exit 1" TERM`, false, 128 + 15},
		{"context ends, SIGTERM ignored: SIGKILL", `trap "" TERM`, false, 128 + 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ready := filepath.Join(t.TempDir(), "ready")
			script := "touch " + ready + "; while :; do sleep 0.02; done"
			if tt.trap != "" {
				script = tt.trap + "; " + script
			}
			sigs := make(chan os.Signal, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for {
					if _, err := os.Stat(ready); err == nil {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				if tt.signal {
					sigs <- syscall.SIGTERM
				} else {
					cancel()
				}
			}()
			type result struct {
				code int
				err  error
			}
			done := make(chan result, 1)
			start := time.Now()
			go func() {
				code, err := preflight.RunWithSignals(ctx, []string{"sh", "-c", script}, io.Discard, io.Discard, sigs, grace)
				done <- result{code, err}
			}()
			select {
			case r := <-done:
				require.NoError(t, r.err)
				assert.Equal(t, tt.want, r.code)
				if tt.want == 128+9 {
					// Killed only once the grace is over (a lower bound:
					// a loaded machine can only make it later).
					assert.GreaterOrEqual(t, time.Since(start), grace)
				}
			case <-time.After(signalHang):
				t.Fatalf("the launcher still runs %v after it was told to stop", signalHang)
			}
		})
	}
}

func TestLauncher(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	stub := func(t *testing.T, dir, name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!"+shPath(t)+"\n"+body+"\n"), 0o755))
	}
	tests := []struct {
		name    string
		stubs   map[string]string
		want    []string
		wantErr bool
	}{
		{"torchrun on the PATH", map[string]string{"torchrun": "exit 0", "python3": "exit 1"}, []string{"torchrun"}, false},
		{"python3 with torch", map[string]string{"python3": `case "$2" in *find_spec*) exit 0;; esac; exit 9`},
			[]string{"python3", "-m", "torch.distributed.run"}, false},
		{"python3 without torch", map[string]string{"python3": "exit 1"}, nil, true},
		{"neither", nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tt.stubs {
				stub(t, dir, name, body)
			}
			t.Setenv("PATH", dir)
			got, err := preflight.Launcher()
			if tt.wantErr {
				require.ErrorIs(t, err, preflight.ErrNoLauncher)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func shPath(t *testing.T) string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	return sh
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false},
		{"67108864", 64 << 20, false},
		{"64MiB", 64 << 20, false},
		{"64mib", 64 << 20, false},
		{"64 MiB", 64 << 20, false},
		{"64Mi", 64 << 20, false},
		{"1GiB", 1 << 30, false},
		{"4KiB", 4096, false},
		{"100MB", 100e6, false},
		{"2k", 2000, false},
		{"512B", 512, false},
		{"", 0, true},
		{"MiB", 0, true},
		{"-1", 0, true},
		{"1.5GiB", 0, true},
		{"64XB", 0, true},
		{"9999999999GiB", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := preflight.ParseBytes(tt.in)
			if tt.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func python(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on the PATH: skipping the payload's py_compile check and its CPU tests (they need no torch, only python3)")
	}
	return p
}

// TestPayloadCompiles is CI's check of the payload: CI has no GPU and no
// torch, but the file must at least be valid Python.
func TestPayloadCompiles(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	require.NoError(t, preflight.Emit(dir, []byte("{}")))
	out, err := exec.Command(py, "-m", "py_compile", filepath.Join(dir, preflight.PayloadFile)).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// TestPayloadLogic runs the payload's own unit tests (plan checks, group
// building, reports) and gives them, to compare against the groups the
// payload builds from module sizes, the plan mimoplan renders for every
// golden layout beside Megatron's own enumeration of it, and the plans
// of the GPU test layouts.
func TestPayloadLogic(t *testing.T) {
	if testing.Short() {
		t.Skip("the payload's unittest over every golden plan takes ~50 s: make test runs it")
	}
	py := python(t)
	plans := t.TempDir()
	golden := testutil.GoldenDir()
	layouts := testutil.GoldenLayouts(t, "*.yaml")
	ours, err := filepath.Glob("testdata/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, ours)
	for _, l := range append(layouts, ours...) {
		res, err := validate.Load(l)
		require.NoError(t, err)
		require.NotNil(t, res.Topology, "%s: %v", l, res.Diags)
		name := strings.TrimSuffix(filepath.Base(l), ".yaml")
		writeFile(t, plans, name+".plan.json", string(planOf(t, res)))
		if exp, err := os.ReadFile(filepath.Join(golden, "expected", name+".json")); err == nil {
			writeFile(t, plans, name+".expected.json", string(exp))
		}
	}
	cmd := exec.Command(py, "-m", "unittest", "-v", "test_preflight")
	cmd.Dir = "payload"
	cmd.Env = append(os.Environ(), "PREFLIGHT_PLANS="+plans, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "test_rendered_plans (test_preflight.RankEnum")
	assert.NotContains(t, string(out), "skipped 'PREFLIGHT_PLANS")
}

// TestCorruptPlans checks the fixtures the GPU runs use: each is its
// layout's plan with exactly one group kind changed, and still a partition
// of the module's ranks, so only the run on the GPUs can tell.
func TestCorruptPlans(t *testing.T) {
	tests := []struct {
		fixture, layout, module, kind string
		want                          [][]int
	}{
		{"corrupt-coloc-2gpu.plan.json", "coloc-2gpu.yaml", "vision", "tp", [][]int{{0}, {1}}},
		{"corrupt-coloc-4gpu.plan.json", "coloc-4gpu.yaml", "vision", "tp", [][]int{{0, 2}, {1, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tt.fixture))
			require.NoError(t, err)
			var bad, good map[string]any
			require.NoError(t, json.Unmarshal(raw, &bad))
			require.NoError(t, json.Unmarshal(planOf(t, load(t, filepath.Join("testdata", tt.layout))), &good))
			groups := func(plan map[string]any) map[string]any {
				for _, m := range plan["modules"].([]any) {
					if mm := m.(map[string]any); mm["name"] == tt.module {
						return mm["groups"].(map[string]any)
					}
				}
				t.Fatalf("no module %s", tt.module)
				return nil
			}
			var want any
			b, _ := json.Marshal(tt.want)
			require.NoError(t, json.Unmarshal(b, &want))
			assert.Equal(t, want, groups(bad)[tt.kind])
			assert.NotEqual(t, groups(good)[tt.kind], groups(bad)[tt.kind])
			groups(bad)[tt.kind] = groups(good)[tt.kind]
			assert.Equal(t, good, bad, "only %s/%s may differ", tt.module, tt.kind)
		})
	}
}
