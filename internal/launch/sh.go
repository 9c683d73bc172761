package launch

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// heredocEnd ends the here-document that carries the topology; no line
// of the topology JSON can equal it (each starts with a brace, a bracket
// or a space).
const heredocEnd = "MIMOPLAN_TOPOLOGY_JSON"

// carriesTopology reports whether the script itself must hand the
// program its topology (rather than point at a shared --topology-out).
func (p *Plan) carriesTopology() bool { return p.PassTopology && p.TopologyPath == "" }

// WriteSh writes a bash script that runs one node's torchrun: the node
// rank is its first argument or $NODE_RANK.
func WriteSh(w io.Writer, p *Plan) error {
	if !p.concrete() {
		return errNoHosts
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "#!/usr/bin/env bash")
	if p.Rendezvous.Backend == C10d {
		// c10d ignores --node-rank: the same command runs everywhere.
		p.header(bw, "Run it on every host: ./"+p.file("plan.sh"), p.Rendezvous.MasterAddr)
		p.table(bw, func(n Node) string { return n.Host })
		fmt.Fprint(bw, "set -euo pipefail\n\n")
	} else {
		run := "./" + p.file("plan.sh")
		p.header(bw, "Run it on every host with that host's node rank:\n  "+run+" NODE_RANK    or    NODE_RANK=i "+run+"\nor, on a host named as below, "+run+" alone: its place in the list is its rank.", p.Rendezvous.MasterAddr)
		p.table(bw, func(n Node) string { return n.Host })
		q := make([]string, p.NNodes)
		for i := range q {
			q[i] = Quote(p.hosts[i])
		}
		fmt.Fprintf(bw, `set -euo pipefail

usage() {
  echo "usage: $0 NODE_RANK (0-%[1]d), or set NODE_RANK, or run it on one of the hosts: %[2]s" >&2
  exit 2
}
[ "$#" -le 1 ] || usage
node_rank="${1:-${NODE_RANK:-}}"
if [ -z "$node_rank" ]; then
  # The node rank of this host: its place in the plan's host list.
  hosts=(%[2]s)
  short=$(hostname -s 2>/dev/null || true)
  long=$(hostname 2>/dev/null || true)
  for i in "${!hosts[@]}"; do
    if [ "${hosts[i]}" = "$short" ] || [ "${hosts[i]}" = "$long" ]; then node_rank=$i; fi
  done
fi
case "$node_rank" in
'' | *[!0-9]* | 0?*) usage ;;
esac
if [ "${#node_rank}" -gt 9 ] || [ "$node_rank" -gt %[1]d ]; then
  echo "$0: node rank $node_rank is outside 0-%[1]d" >&2
  exit 2
fi

`, p.NNodes-1, strings.Join(q, " "))
	}
	p.exports(bw)
	if p.carriesTopology() {
		fmt.Fprintf(bw, `
# The layout's topology, for the program: written into this run's own
# directory, which MIMOPLAN_TOPOLOGY names.
job_dir=$(mktemp -d "${TMPDIR:-/tmp}/%s.XXXXXX")
cat >"$job_dir/%s" <<'%s'
%s%s
export %s="$job_dir/%s"
`, jobName(p.Name, 64, "_.-"), TopologyFile, heredocEnd, p.Topology, heredocEnd, TopologyEnv, TopologyFile)
	}
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "exec %s\n", continued(p, word{{s: "$node_rank", ref: true}}, lit(p.Rendezvous.MasterAddr)))
	return bw.Flush()
}
