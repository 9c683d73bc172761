package launch

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// sbatchKey is an sbatch long option name.
var sbatchKey = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// planSbatch are the sbatch options the plan sets itself.
var planSbatch = map[string]string{
	"nodes": "the layout's node count", "N": "the layout's node count",
	"ntasks": "one task per node", "ntasks-per-node": "one task per node", "n": "one task per node",
	"gpus-per-node": "cluster.gpus_per_node", "gpus": "cluster.gpus_per_node", "gres": "cluster.gpus_per_node",
	"nodelist": "--hosts or --hostfile", "w": "--hosts or --hostfile",
	"cpus-per-task": "--cpus-per-task", "c": "--cpus-per-task",
	"job-name": "the layout's name", "J": "the layout's name",
}

// CheckSbatch checks --sbatch directives: KEY=VALUE or KEY, a long
// option the plan does not set itself, on one line.
func CheckSbatch(ds []string) error {
	for _, d := range ds {
		key, val, _ := strings.Cut(strings.TrimPrefix(d, "--"), "=")
		switch {
		case !sbatchKey.MatchString(key):
			return fmt.Errorf("--sbatch %q: want KEY=VALUE or KEY, KEY an sbatch long option such as partition, account, time or exclusive", d)
		case planSbatch[key] != "":
			return fmt.Errorf("--sbatch %q: the plan sets --%s itself (from %s)", d, key, planSbatch[key])
		case strings.ContainsAny(val, "\n\r\x00"):
			return fmt.Errorf("--sbatch %q: a directive is one line", d)
		}
	}
	return nil
}

// Variables that carry the plan from the batch script to srun's tasks
// (srun passes the environment on).
const (
	slurmHostsVar    = "LAUNCH_PLAN_HOSTS"
	slurmAllocVar    = "LAUNCH_PLAN_ALLOCATED"
	slurmTopologyVar = "LAUNCH_PLAN_TOPOLOGY"
)

// slurmTask is the script every srun task runs: its node rank is its
// host's position in the plan's host list, whatever order Slurm numbers
// the nodes in (SLURM_NODEID follows the sorted node names, not the
// plan); then it writes the topology on its node and becomes torchrun.
const slurmTask = `set -euo pipefail
read -r -a hosts <<<"$` + slurmHostsVar + `"
read -r -a allocated <<<"$` + slurmAllocVar + `"
# This node's Slurm name: slurmd's, else the allocation's entry at
# SLURM_NODEID (an index into Slurm's own order), else the host name.
me="${SLURMD_NODENAME:-}"
if [ -z "$me" ] && [ -n "${SLURM_NODEID:-}" ]; then me="${allocated[SLURM_NODEID]:-}"; fi
if [ -z "$me" ]; then me=$(hostname -s); fi
node_rank=
for i in "${!hosts[@]}"; do
  if [ "${hosts[i]}" = "$me" ]; then node_rank=$i; fi
done
if [ -z "$node_rank" ]; then
  echo "launch plan: this node, $me, is not one of the hosts of the plan: ${hosts[*]}" >&2
  exit 1
fi
`

// slurmTopology writes the topology into the job's directory on the node.
const slurmTopology = `job_dir="${TMPDIR:-/tmp}/mimoplan-${SLURM_JOB_ID:-job}.$node_rank"
mkdir -p "$job_dir"
printf %s "$` + slurmTopologyVar + `" >"$job_dir/` + TopologyFile + `"
unset ` + slurmTopologyVar + `
export ` + TopologyEnv + `="$job_dir/` + TopologyFile + `"
`

// WriteSlurm writes an sbatch script: one task per node, each running
// torchrun with the node rank of its host's place in the plan's host list
// (the given hosts, or the allocation's in Slurm's order), and the master
// on the first of them (or the plan's master address, when one was
// given).
func WriteSlurm(w io.Writer, p *Plan) error {
	if err := CheckSbatch(p.Slurm.Sbatch); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "#!/usr/bin/env bash")
	fmt.Fprintf(bw, "#SBATCH --job-name=%s\n", jobName(p.Name, 64, "_.-"))
	fmt.Fprintf(bw, "#SBATCH --nodes=%d\n", p.NNodes)
	fmt.Fprintln(bw, "#SBATCH --ntasks-per-node=1")
	fmt.Fprintf(bw, "#SBATCH --gpus-per-node=%d\n", p.NProcPerNode)
	if p.Slurm.CPUsPerTask > 0 {
		fmt.Fprintf(bw, "#SBATCH --cpus-per-task=%d\n", p.Slurm.CPUsPerTask)
	}
	if p.HostsGiven {
		fmt.Fprint(bw, "#SBATCH --nodelist=")
		p.eachHost(bw, ",", func(h string) string { return h })
		fmt.Fprintln(bw)
	}
	for _, d := range p.Slurm.Sbatch {
		fmt.Fprintf(bw, "#SBATCH --%s\n", strings.TrimPrefix(d, "--"))
	}
	master := "the first host"
	if p.MasterGiven {
		master = p.Rendezvous.MasterAddr
	}
	how := "Submit it with: sbatch " + p.file("plan.slurm") + "\nThe node named i-th in the allocation's order (scontrol show hostnames) runs node rank i."
	if p.HostsGiven {
		how = "Submit it with: sbatch " + p.file("plan.slurm") + "\nEach node runs the node rank of its place in the host list below, whatever\norder Slurm numbers the nodes in."
	}
	p.header(bw, how, master)
	p.table(bw, func(n Node) string {
		if p.HostsGiven {
			return n.Host
		}
		return "allocation node " + strconv.Itoa(n.NodeRank)
	})
	fmt.Fprintf(bw, `set -euo pipefail

mapfile -t allocated < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
if [ "${#allocated[@]}" -ne %[1]d ]; then
  echo "launch plan: the allocation has ${#allocated[@]} nodes, the layout needs %[1]d" >&2
  exit 1
fi
`, p.NNodes)
	if p.HostsGiven {
		fmt.Fprint(bw, "hosts=(")
		p.eachHost(bw, " ", Quote)
		fmt.Fprintf(bw, `)
if [ "$(printf '%%s\n' "${hosts[@]}" | sort)" != "$(printf '%%s\n' "${allocated[@]}" | sort)" ]; then
  echo "launch plan: the allocation is ${allocated[*]}, the plan needs ${hosts[*]}" >&2
  exit 1
fi
`)
	} else {
		fmt.Fprintln(bw, `hosts=("${allocated[@]}")`)
	}
	fmt.Fprintf(bw, "export %s=\"${hosts[*]}\" %s=\"${allocated[*]}\"\n", slurmHostsVar, slurmAllocVar)
	master = `"${hosts[0]}"`
	if p.MasterGiven {
		master = Quote(p.Rendezvous.MasterAddr)
	}
	fmt.Fprintf(bw, "export MASTER_ADDR=%s\n", master)
	p.exports(bw)
	task := slurmTask
	if p.carriesTopology() {
		fmt.Fprintf(bw, "IFS= read -r -d '' %s <<'%s' || true\n%s%s\nexport %s\n", slurmTopologyVar, heredocEnd, p.Topology, heredocEnd, slurmTopologyVar)
		task += slurmTopology
	}
	// The program's arguments reach bash -c as its positional parameters,
	// so they are quoted once, for this script, and never re-parsed.
	task += "exec " + shellLine(p.launcher(word{{s: "$node_rank", ref: true}}, word{{s: "$MASTER_ADDR", ref: true}})) + ` "$@"`
	srun := fmt.Sprintf("srun --nodes=%d --ntasks=%d --ntasks-per-node=1 --kill-on-bad-exit=1", p.NNodes, p.NNodes)
	if img := p.Slurm.ContainerImage; img != "" {
		srun += " \\\n  --container-image=" + Quote(img)
	}
	if m := p.Slurm.ContainerMounts; m != "" {
		srun += " \\\n  --container-mounts=" + Quote(m)
	}
	fmt.Fprintf(bw, "\n%s \\\n  bash -c %s bash \\\n  %s\n", srun, Quote(task), programLines(p.Program))
	return bw.Flush()
}
