package launch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	for i, n := range p.Nodes() {
		args := []string{strconv.Itoa(i)}
		var env []string
		if i == 3 {
			args, env = nil, []string{"NODE_RANK=3"}
		}
		res, code := run(env, args...)
		work, out, _ := strings.Cut(res, "|")
		require.Equal(t, 0, code, out)
		gotEnv, topo, argv := record(t, filepath.Join(work, "rec.0"))
		assert.Equal(t, []string{"PCI_BUS_ID", "1", "/shared/it's here.json", "$(touch pwned) 'q'\r\nnext"}, gotEnv)
		assert.Equal(t, "nofile", topo, "--topology-out: the plan points at the shared file")
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
	_, _, argv := record(t, filepath.Join(work, "rec.0"))
	assert.Equal(t, p.Node(1).Command[1:], argv, "the argument wins over NODE_RANK: %s", out)
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
	_, _, argv := record(t, filepath.Join(work, "rec.0"))
	assert.Equal(t, p.Node(0).Command[1:], argv, "no node rank needed")
	assert.Equal(t, p.Node(0).Command, p.Node(3).Command)
}

// TestShTopology: the script writes the topology into a directory of its
// own at run time and points MIMOPLAN_TOPOLOGY there; nothing lands in
// the directory it runs in.
func TestShTopology(t *testing.T) {
	bash := needBash(t)
	src := strings.Replace(threeModule, "name: three-module-4node", `name: "it's ${x} $(touch pwned)"`, 1)
	p := build(t, src, Options{Hosts: hosts4, Program: []string{"train.py"}})
	require.True(t, p.PassTopology)
	script := writeScript(t, func(b *bytes.Buffer) error { return WriteSh(b, p) })
	bin := fakeBin(t, map[string]string{"torchrun": fakeTorchrun})
	work, tmp := t.TempDir(), t.TempDir()
	for i := range 2 {
		cmd := exec.Command(bash, script, strconv.Itoa(i))
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "RECORD="+filepath.Join(tmp, "rec"), "TMPDIR="+tmp)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		env, topo, _ := record(t, filepath.Join(tmp, "rec.0"))
		assert.Equal(t, string(p.Topology), topo, "the topology, byte for byte")
		assert.True(t, strings.HasPrefix(env[2], tmp+"/"), "under TMPDIR: %s", env[2])
		assert.Equal(t, TopologyFile, filepath.Base(env[2]))
	}
	entries, err := os.ReadDir(work)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written where the plan runs")
}

// TestShRankFromHostName: run without a node rank on a host of the plan,
// the script takes the host's place in the list, whatever order the hosts
// start in (a stand-in hostname names each).
func TestShRankFromHostName(t *testing.T) {
	bash := needBash(t)
	hosts := []string{"n3.example", "n1.example", "n0.example", "n2.example"}
	p := build(t, threeModule, Options{Hosts: hosts, Program: []string{"train.py"}})
	script := writeScript(t, func(b *bytes.Buffer) error { return WriteSh(b, p) })
	for _, i := range []int{2, 0, 3, 1} {
		short, long := strings.Split(hosts[i], ".")[0], hosts[i]
		if i%2 == 1 {
			short = "other" // the full name matches
		}
		bin := fakeBin(t, map[string]string{
			"torchrun": fakeTorchrun,
			"hostname": `if [ "${1:-}" = -s ]; then echo ` + short + `; else echo ` + long + `; fi`,
		})
		work := t.TempDir()
		cmd := exec.Command(bash, script)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "NODE_RANK=", "PATH="+bin+":"+os.Getenv("PATH"), "RECORD="+filepath.Join(work, "rec"), "TMPDIR="+work)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		_, _, argv := record(t, filepath.Join(work, "rec.0"))
		assert.Equal(t, p.Node(i).Command[1:], argv, "host %s runs node rank %d", hosts[i], i)
	}
	bin := fakeBin(t, map[string]string{"torchrun": fakeTorchrun, "hostname": "echo stranger"})
	cmd := exec.Command(bash, script)
	cmd.Env = append(os.Environ(), "NODE_RANK=", "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "or run it on one of the hosts: n3.example n1.example n0.example n2.example")
}
