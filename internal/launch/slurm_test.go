package launch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runSlurm runs an sbatch script as Slurm would, with stand-ins:
// scontrol lists the allocation's nodes sorted by name, as Slurm does, and
// srun starts one task per node in the order given (shuffled, unlike the
// plan's), each with SLURMD_NODENAME, SLURM_NODEID (its place in Slurm's
// sorted order) and SLURM_JOB_ID, and records its own flags.
func runSlurm(t *testing.T, script string, nodes, order []string) (work, out string, code int) {
	t.Helper()
	return runSlurmWith(t, script, nodes, order, "SLURMD_NODENAME=$node SLURM_NODEID=$id")
}

// runSlurmWith is runSlurm with the task variables srun sets, as shell
// assignments of $node and $id.
func runSlurmWith(t *testing.T, script string, nodes, order []string, vars string) (work, out string, code int) {
	t.Helper()
	bash := needBash(t)
	bin := fakeBin(t, map[string]string{
		"torchrun": fakeTorchrun,
		"scontrol": `[ "$1 $2" = "show hostnames" ] || exit 9
tr ',' '\n' <<<"$3" | LC_ALL=C sort
`,
		"srun": `flags=()
while [[ $1 == --* ]]; do flags+=("$1"); shift; done
printf '%s\n' "${flags[@]}" >"$RECORD.srun"
mapfile -t sorted < <(tr ',' '\n' <<<"$SLURM_JOB_NODELIST" | LC_ALL=C sort)
for node in $SRUN_ORDER; do
  id=
  for i in "${!sorted[@]}"; do [ "${sorted[i]}" = "$node" ] && id=$i; done
  env ` + vars + ` SLURM_JOB_ID=77 "$@" || exit
done
`,
	})
	work = t.TempDir()
	tmp := t.TempDir()
	cmd := exec.Command(bash, script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "RECORD="+filepath.Join(tmp, "rec"),
		"SLURM_JOB_NODELIST="+strings.Join(nodes, ","), "SRUN_ORDER="+strings.Join(order, " "), "TMPDIR="+tmp)
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	assert.NoFileExists(t, filepath.Join(work, "pwned"))
	entries, _ := os.ReadDir(work)
	assert.Empty(t, entries, "nothing written where the job runs")
	return tmp, string(b), code
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

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func TestSlurm(t *testing.T) {
	prog := append([]string{"train.py"}, hostile...)
	t.Run("allocation picks the hosts: node rank by Slurm's order of names", func(t *testing.T) {
		p := build(t, threeModule, Options{Program: prog, Env: []EnvVar{{"EXTRA", "a'b"}}})
		script := writeScript(t, func(b *bytes.Buffer) error { return WriteSlurm(b, p) })
		assert.Equal(t, map[string]string{
			"--job-name": "three-module-4node", "--nodes": "4", "--ntasks-per-node": "1", "--gpus-per-node": "8",
		}, sbatchDirectives(t, script))
		b, _ := os.ReadFile(script)
		assert.Contains(t, string(b), "srun --nodes=4 --ntasks=4 --ntasks-per-node=1 --kill-on-bad-exit=1")

		nodes := []string{"gpu7", "gpu10", "gpu9", "gpu8"}
		alloc := sorted(nodes) // gpu10 gpu7 gpu8 gpu9
		work, out, code := runSlurm(t, script, nodes, []string{"gpu9", "gpu7", "gpu10", "gpu8"})
		require.Equal(t, 0, code, out)
		for i, host := range alloc {
			env, topo, argv := record(t, filepath.Join(work, "rec."+host))
			assert.Equal(t, []string{"PCI_BUS_ID", "1", filepath.Join(work, "mimoplan-77."+itoa(i), TopologyFile), "a'b"}, env)
			assert.Equal(t, string(p.Topology), topo, "the topology travels with the plan")
			want := plainArgv(p.words(lit(itoa(i)), lit(alloc[0])))
			assert.Equal(t, want[1:], argv, "node %s", host)
		}

		_, out, code = runSlurm(t, script, []string{"gpu7", "gpu8"}, []string{"gpu7", "gpu8"})
		assert.Equal(t, 1, code)
		assert.Contains(t, out, "the allocation has 2 nodes, the layout needs 4")
	})
	t.Run("given hosts: node rank by the plan's order, whatever Slurm's", func(t *testing.T) {
		plan := []string{"h3", "h1", "h0", "h2"}
		p := build(t, threeModule, Options{Hosts: plan, Program: prog})
		script := writeScript(t, func(b *bytes.Buffer) error { return WriteSlurm(b, p) })
		assert.Equal(t, "h3,h1,h0,h2", sbatchDirectives(t, script)["--nodelist"])
		for _, order := range [][]string{{"h0", "h1", "h2", "h3"}, {"h2", "h3", "h0", "h1"}} {
			work, out, code := runSlurm(t, script, sorted(plan), order)
			require.Equal(t, 0, code, out)
			for i, n := range p.Nodes() {
				require.Equal(t, plan[i], n.Host)
				_, _, argv := record(t, filepath.Join(work, "rec."+n.Host))
				assert.Equal(t, n.Command[1:], argv, "node %d on %s, srun order %v", i, n.Host, order)
				assert.Contains(t, argv, "--master-addr=h3")
			}
		}
		// An srun that sets SLURM_NODEID (Slurm's order) and no
		// SLURMD_NODENAME: the allocation's list names the node.
		work, out, code := runSlurmWith(t, script, sorted(plan), []string{"h2", "h0", "h3", "h1"}, "SLURM_NODEID=$id")
		require.Equal(t, 0, code, out)
		alloc := sorted(plan)
		for i, n := range p.Nodes() {
			id := slices.Index(alloc, plan[i])
			_, _, argv := record(t, filepath.Join(work, "rec."+itoa(id)))
			assert.Equal(t, n.Command[1:], argv, "node %d on %s, SLURM_NODEID %d", i, plan[i], id)
		}
		_, out, code = runSlurm(t, script, []string{"h0", "h1", "h2", "h5"}, []string{"h0"})
		assert.Equal(t, 1, code)
		assert.Contains(t, out, "the allocation is h0 h1 h2 h5, the plan needs h3 h1 h0 h2")
	})
	t.Run("a task on a node outside the plan stops", func(t *testing.T) {
		p := build(t, threeModule, Options{Hosts: hosts4, Program: prog})
		script := writeScript(t, func(b *bytes.Buffer) error { return WriteSlurm(b, p) })
		_, out, code := runSlurm(t, script, hosts4, []string{"h0", "x9"})
		assert.Equal(t, 1, code)
		assert.Contains(t, out, "this node, x9, is not one of the hosts of the plan: h0 h1 h2 h3")
	})
	t.Run("one node takes its host from the allocation too", func(t *testing.T) {
		p := build(t, nemotron, Options{LayoutArgs: true})
		script := writeScript(t, func(b *bytes.Buffer) error { return WriteSlurm(b, p) })
		assert.NotContains(t, sbatchDirectives(t, script), "--nodelist")
		b, _ := os.ReadFile(script)
		assert.Contains(t, string(b), "static rendezvous at the first host")
		assert.NotContains(t, string(b), "localhost")
		assert.NotContains(t, string(b), TopologyEnv, "megatron-lm reads its arguments")
		work, out, code := runSlurm(t, script, []string{"gpu3"}, []string{"gpu3"})
		require.Equal(t, 0, code, out)
		env, topo, argv := record(t, filepath.Join(work, "rec.gpu3"))
		assert.Equal(t, "unset", env[2])
		assert.Equal(t, "nofile", topo)
		assert.Equal(t, plainArgv(p.words(lit("0"), lit("gpu3")))[1:], argv)
	})
	t.Run("c10d and a given master", func(t *testing.T) {
		p := build(t, threeModule, Options{MasterAddr: "login1", Rendezvous: C10d, Program: []string{"t.py"}})
		script := writeScript(t, func(b *bytes.Buffer) error { return WriteSlurm(b, p) })
		b, _ := os.ReadFile(script)
		assert.Contains(t, string(b), "# note: c10d rendezvous")
		work, out, code := runSlurm(t, script, []string{"a", "b", "c", "d"}, []string{"c", "a", "d", "b"})
		require.Equal(t, 0, code, out)
		_, _, argv := record(t, filepath.Join(work, "rec.c"))
		assert.Equal(t, []string{"--nnodes=4", "--nproc-per-node=8", "--rdzv-backend=c10d", "--rdzv-endpoint=login1:29500",
			"--rdzv-id=three-module-4node", "t.py"}, argv)
	})
	t.Run("sbatch directives, cpus per task, pyxis, a shared topology file", func(t *testing.T) {
		p := build(t, threeModule, Options{Program: []string{"t.py"}, TopologyPath: "/shared/t.json", Slurm: SlurmOptions{
			Sbatch: []string{"partition=gpu", "account=my acct", "time=4:00:00", "exclusive"}, CPUsPerTask: 64,
			ContainerImage: "nvcr.io#nvidia/pytorch:25.01-py3", ContainerMounts: "/data:/data,/home/me:/work",
		}})
		script := writeScript(t, func(b *bytes.Buffer) error { return WriteSlurm(b, p) })
		d := sbatchDirectives(t, script)
		assert.Equal(t, "64", d["--cpus-per-task"])
		assert.Equal(t, "gpu", d["--partition"])
		assert.Equal(t, "my acct", d["--account"])
		assert.Equal(t, "4:00:00", d["--time"])
		assert.Contains(t, d, "--exclusive")
		work, out, code := runSlurm(t, script, hosts4, []string{"h1", "h3", "h2", "h0"})
		require.Equal(t, 0, code, out)
		srun, err := os.ReadFile(filepath.Join(work, "rec.srun"))
		require.NoError(t, err)
		assert.Equal(t, "--nodes=4\n--ntasks=4\n--ntasks-per-node=1\n--kill-on-bad-exit=1\n"+
			"--container-image=nvcr.io#nvidia/pytorch:25.01-py3\n--container-mounts=/data:/data,/home/me:/work\n", string(srun))
		env, topo, _ := record(t, filepath.Join(work, "rec.h2"))
		assert.Equal(t, "/shared/t.json", env[2], "--topology-out: the shared file")
		assert.Equal(t, "nofile", topo)
	})
}

func TestCheckSbatch(t *testing.T) {
	assert.NoError(t, CheckSbatch([]string{"partition=gpu", "--account=a", "exclusive", "time=1-00:00:00", "mail-type=END,FAIL"}))
	for in, want := range map[string]string{
		"nodes=2":           "the plan sets --nodes itself",
		"ntasks-per-node=8": "the plan sets --ntasks-per-node",
		"gres=gpu:8":        "the plan sets --gres",
		"nodelist=a":        "from --hosts or --hostfile",
		"cpus-per-task=4":   "from --cpus-per-task",
		"Partition=x":       "want KEY=VALUE or KEY",
		"p=x y":             "",
		"=x":                "want KEY=VALUE",
		"time=1\n#SBATCH x": "one line",
	} {
		err := CheckSbatch([]string{in})
		if want == "" {
			assert.NoError(t, err, in)
			continue
		}
		assert.ErrorContains(t, err, want, in)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
