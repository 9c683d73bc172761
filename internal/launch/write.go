package launch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/english"
)

// Formats are the plan formats, in the order the CLI lists them.
var Formats = []string{"sh", "json", "slurm", "k8s"}

// Write writes p in one of Formats.
func Write(w io.Writer, format string, p *Plan) error {
	switch format {
	case "sh":
		return WriteSh(w, p)
	case "json":
		return WriteJSON(w, p)
	case "slurm":
		return WriteSlurm(w, p)
	case "k8s":
		return WriteK8s(w, p)
	}
	return fmt.Errorf("unknown plan format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// FileMode is the mode of a plan file: scripts are executable.
func FileMode(format string) os.FileMode {
	if format == "sh" || format == "slurm" {
		return 0o755
	}
	return 0o644
}

var errNoHosts = errors.New("the plan has no hosts: give one per node (--hosts or --hostfile)")

type jsonPlan struct {
	Name         string     `json:"name"`
	Target       string     `json:"target"`
	WorldSize    int        `json:"world_size"`
	NNodes       int        `json:"nnodes"`
	NProcPerNode int        `json:"nproc_per_node"`
	Rendezvous   Rendezvous `json:"rendezvous"`
	Notes        []string   `json:"notes,omitempty"`
	Nodes        []jsonNode `json:"nodes"`
}

type jsonNode struct {
	NodeRank  int               `json:"node_rank"`
	Host      string            `json:"host"`
	FirstRank int               `json:"first_rank"`
	LastRank  int               `json:"last_rank"`
	Modules   []ModuleSpan      `json:"modules"`
	Command   []string          `json:"command"`
	Env       map[string]string `json:"env"`
}

// WriteJSON writes the plan as one indented JSON document.
func WriteJSON(w io.Writer, p *Plan) error {
	if !p.concrete() {
		return errNoHosts
	}
	env := map[string]string{}
	for _, e := range p.Env {
		env[e.Name] = e.Value
	}
	jp := jsonPlan{
		Name: p.Name, Target: string(p.Target), WorldSize: p.WorldSize, NNodes: p.NNodes,
		NProcPerNode: p.NProcPerNode, Rendezvous: p.Rendezvous, Notes: p.Notes,
		Nodes: make([]jsonNode, len(p.Nodes)),
	}
	for i, n := range p.Nodes {
		jp.Nodes[i] = jsonNode{
			NodeRank: n.NodeRank, Host: n.Host, FirstRank: n.FirstRank, LastRank: n.LastRank,
			Modules: n.Modules, Command: n.Command, Env: env,
		}
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(jp); err != nil {
		return err
	}
	return bw.Flush()
}

// concrete reports whether every node has a host and a command.
func (p *Plan) concrete() bool {
	for _, n := range p.Nodes {
		if n.Host == "" || n.Command == nil {
			return false
		}
	}
	return true
}

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
		p.header(bw, "Run it on every host: ./plan.sh", p.Rendezvous.MasterAddr)
		p.table(bw, func(n Node) string { return n.Host })
		fmt.Fprint(bw, "set -euo pipefail\n\n")
	} else {
		p.header(bw, "Run it on every host with that host's node rank:\n  ./plan.sh NODE_RANK    or    NODE_RANK=i ./plan.sh", p.Rendezvous.MasterAddr)
		p.table(bw, func(n Node) string { return n.Host })
		fmt.Fprintf(bw, `set -euo pipefail

usage() {
  echo "usage: $0 NODE_RANK (0-%[1]d), or set NODE_RANK" >&2
  exit 2
}
[ "$#" -le 1 ] || usage
node_rank="${1:-${NODE_RANK:-}}"
case "$node_rank" in
'' | *[!0-9]* | 0?*) usage ;;
esac
if [ "${#node_rank}" -gt 9 ] || [ "$node_rank" -gt %[1]d ]; then
  echo "$0: node rank $node_rank is outside 0-%[1]d" >&2
  exit 2
fi

`, p.NNodes-1)
	}
	p.exports(bw)
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "exec %s\n", continued(p, word{{s: "$node_rank", ref: true}}, lit(p.Rendezvous.MasterAddr)))
	return bw.Flush()
}

// WriteSlurm writes an sbatch script: one task per node, each running
// torchrun with its node rank from SLURM_NODEID and the master on the
// allocation's first node (or the plan's master address, when one was
// given).
func WriteSlurm(w io.Writer, p *Plan) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "#!/usr/bin/env bash")
	fmt.Fprintf(bw, "#SBATCH --job-name=%s\n", jobName(p.Name, 64, "_.-"))
	fmt.Fprintf(bw, "#SBATCH --nodes=%d\n", p.NNodes)
	fmt.Fprintln(bw, "#SBATCH --ntasks-per-node=1")
	fmt.Fprintf(bw, "#SBATCH --gpus-per-node=%d\n", p.NProcPerNode)
	var hosts []string
	if p.HostsGiven {
		for _, n := range p.Nodes {
			hosts = append(hosts, n.Host)
		}
		fmt.Fprintf(bw, "#SBATCH --nodelist=%s\n", strings.Join(hosts, ","))
	}
	master := "the allocation's first node"
	if p.MasterGiven {
		master = p.Rendezvous.MasterAddr
	}
	p.header(bw, "Submit it with: sbatch plan.slurm\nSLURM_NODEID i runs node rank i, on the i-th host of the allocation.", master)
	p.table(bw, func(n Node) string {
		if p.HostsGiven {
			return n.Host
		}
		return "SLURM_NODEID " + strconv.Itoa(n.NodeRank)
	})
	fmt.Fprintf(bw, `set -euo pipefail

mapfile -t hosts < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
if [ "${#hosts[@]}" -ne %[1]d ]; then
  echo "launch plan: the allocation has ${#hosts[@]} nodes, the layout needs %[1]d" >&2
  exit 1
fi
`, p.NNodes)
	if hosts != nil {
		q := make([]string, len(hosts))
		for i, h := range hosts {
			q[i] = Quote(h)
		}
		fmt.Fprintf(bw, `# Slurm numbers nodes in its own order; ranks must land on the hosts above.
expected=(%s)
if [ "${hosts[*]}" != "${expected[*]}" ]; then
  echo "launch plan: Slurm ordered the nodes ${hosts[*]}, the plan needs ${expected[*]}" >&2
  exit 1
fi
`, strings.Join(q, " "))
	}
	master = `"${hosts[0]}"`
	if p.MasterGiven {
		master = Quote(p.Rendezvous.MasterAddr)
	}
	fmt.Fprintf(bw, "export MASTER_ADDR=%s\n", master)
	p.exports(bw)
	// The program's arguments reach bash -c as its positional parameters,
	// so they are quoted once, for this script, and never re-parsed.
	inner := "exec " + shellLine(p.launcher(word{{s: "$SLURM_NODEID", ref: true}}, word{{s: "$MASTER_ADDR", ref: true}})) + ` "$@"`
	fmt.Fprintf(bw, "\nsrun --nodes=%d --ntasks=%d --ntasks-per-node=1 --kill-on-bad-exit=1 \\\n  bash -c %s bash \\\n  %s\n",
		p.NNodes, p.NNodes, Quote(inner), programLines(p.Program))
	return bw.Flush()
}

// header writes the comment that opens every script.
func (p *Plan) header(w io.Writer, how, master string) {
	name := p.Name
	if name == "" {
		name = "(unnamed layout)"
	}
	fmt.Fprintf(w, "# Launch plan for %s, written by mimoplan launch-plan.\n", comment(name))
	fmt.Fprintf(w, "# %d ranks: %s x %s, %s\n", p.WorldSize, english.Plural(p.NNodes, "node"), english.Plural(p.NProcPerNode, "GPU"), p.rdzvText(comment(master)))
	fmt.Fprintln(w, "#")
	for _, l := range strings.Split(how, "\n") {
		fmt.Fprintf(w, "# %s\n", l)
	}
	for _, n := range p.Notes {
		fmt.Fprintln(w, "#")
		for _, l := range wrap("note: "+comment(n), 76) {
			fmt.Fprintf(w, "# %s\n", l)
		}
	}
	fmt.Fprintln(w, "#")
}

// rdzvText describes the rendezvous at master.
func (p *Plan) rdzvText(master string) string {
	r := p.Rendezvous
	if r.Backend == C10d {
		return fmt.Sprintf("c10d rendezvous at %s, port %d (id %s)", master, r.MasterPort, comment(r.ID))
	}
	return fmt.Sprintf("static rendezvous at %s, port %d", master, r.MasterPort)
}

// table writes which ranks and modules live on each node, as a comment.
func (p *Plan) table(w io.Writer, host func(Node) string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "node rank"
	if p.Rendezvous.Backend == C10d {
		head = "join order"
	}
	fmt.Fprintf(tw, "# %s\thost\tranks\tmodules\n", head)
	for _, n := range p.Nodes {
		var mods []string
		for _, m := range n.Modules {
			mods = append(mods, fmt.Sprintf("%s %s", m.Name, span(m.FirstRank, m.LastRank)))
		}
		fmt.Fprintf(tw, "# %d\t%s\t%s\t%s\n", n.NodeRank, comment(host(n)), span(n.FirstRank, n.LastRank), strings.Join(mods, ", "))
	}
	tw.Flush()
	fmt.Fprintln(w, "#")
}

func span(a, b int) string {
	if a == b {
		return strconv.Itoa(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}

func (p *Plan) exports(w io.Writer) {
	for _, e := range p.Env {
		fmt.Fprintf(w, "export %s=%s\n", e.Name, Quote(e.Value))
	}
}

// continued writes a command with the launcher's flags one per line and
// the program's arguments after them (see programLines).
func continued(p *Plan, nodeRank, master word) string {
	return strings.Join(shellWords(p.launcher(nodeRank, master)), " \\\n  ") + " \\\n  " + programLines(p.Program)
}

// programLines quotes the program and its arguments, starting a new line
// before each --flag so that a flag stays with its value.
func programLines(prog []string) string {
	var b strings.Builder
	for i, a := range prog {
		if i > 0 {
			if strings.HasPrefix(a, "--") {
				b.WriteString(" \\\n    ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(Quote(a))
	}
	return b.String()
}

func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, f := range strings.Fields(s) {
		if line != "" && len(line)+1+len(f) > width {
			lines = append(lines, line)
			line = "  " + f
			continue
		}
		if line == "" {
			line = f
		} else {
			line += " " + f
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// jobName makes a scheduler-safe name from free text: lower-case letters,
// digits and the characters of allowed, anything else becoming '-', at most
// max characters, starting and ending with a letter or digit; "mimoplan"
// when nothing is left.
func jobName(name string, max int, allowed string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || strings.ContainsRune(allowed, r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s := b.String()
	if len(s) > max {
		s = s[:max]
	}
	s = strings.TrimFunc(s, func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') })
	if s == "" {
		return "mimoplan"
	}
	return s
}

// k8sName is a PyTorchJob name: the training operator's webhook wants a
// DNS-1035 label ([a-z]([-a-z0-9]*[a-z0-9])?), since it names the master's
// Service after the job, so a name may not start with a digit. 40
// characters leave room for "-worker-NNNN" within a label's 63.
func k8sName(name string) string {
	s := jobName(name, 40, "-")
	if s[0] >= '0' && s[0] <= '9' {
		s = jobName("mimoplan-"+s, 40, "-")
	}
	return s
}

// Kubeflow PyTorchJob v1 (kubeflow.org/v1), only the fields the plan sets.
// Every string that comes from the user is a YAMLString, so that YAML 1.1
// loaders read it back unchanged too.
type pytorchJob struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       jobSpec    `yaml:"spec"`
}

type objectMeta struct {
	Name        YAMLString            `yaml:"name"`
	Annotations map[string]YAMLString `yaml:"annotations,omitempty"`
}

type jobSpec struct {
	NprocPerNode        YAMLString   `yaml:"nprocPerNode"`
	PytorchReplicaSpecs replicaSpecs `yaml:"pytorchReplicaSpecs"`
}

type replicaSpecs struct {
	Master *replicaSpec `yaml:"Master"`
	Worker *replicaSpec `yaml:"Worker,omitempty"`
}

type replicaSpec struct {
	Replicas      int         `yaml:"replicas"`
	RestartPolicy string      `yaml:"restartPolicy"`
	Template      podTemplate `yaml:"template"`
}

type podTemplate struct {
	Spec podSpec `yaml:"spec"`
}

type podSpec struct {
	Containers []container `yaml:"containers"`
}

type container struct {
	Name      string          `yaml:"name"`
	Image     YAMLString      `yaml:"image"`
	Command   []YAMLString    `yaml:"command"`
	Env       []containerEnv  `yaml:"env,omitempty"`
	Ports     []containerPort `yaml:"ports"`
	Resources resources       `yaml:"resources"`
}

type containerEnv struct {
	Name  YAMLString `yaml:"name"`
	Value YAMLString `yaml:"value"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
}

type resources struct {
	Limits map[string]int `yaml:"limits"`
}

// WriteK8s writes a Kubeflow PyTorchJob: a Master (node rank 0) and
// nnodes-1 Workers (node ranks 1..), each running torchrun with the node
// rank and master address the training operator sets in RANK and
// MASTER_ADDR. The master port is the container port named pytorchjob-port,
// which the operator passes as MASTER_PORT.
func WriteK8s(w io.Writer, p *Plan) error {
	if p.Image == "" {
		return errors.New("a Kubernetes plan needs a container image (--image)")
	}
	name := k8sName(p.Name)
	ws := p.words(word{{s: "$(RANK)", ref: true}}, word{{s: "$(MASTER_ADDR)", ref: true}})
	cmd := make([]YAMLString, len(ws))
	for i, w := range ws {
		cmd[i] = YAMLString(w.kube())
	}
	var env []containerEnv
	for _, e := range p.Env {
		env = append(env, containerEnv{YAMLString(e.Name), YAMLString(strings.ReplaceAll(e.Value, "$", "$$"))})
	}
	replica := func(n int) *replicaSpec {
		return &replicaSpec{
			Replicas:      n,
			RestartPolicy: "Never",
			Template: podTemplate{Spec: podSpec{Containers: []container{{
				Name:      "pytorch",
				Image:     YAMLString(p.Image),
				Command:   cmd,
				Env:       env,
				Ports:     []containerPort{{Name: "pytorchjob-port", ContainerPort: p.Rendezvous.MasterPort}},
				Resources: resources{Limits: map[string]int{"nvidia.com/gpu": p.NProcPerNode}},
			}}}},
		}
	}
	job := pytorchJob{
		APIVersion: "kubeflow.org/v1",
		Kind:       "PyTorchJob",
		Metadata:   objectMeta{Name: YAMLString(name)},
		Spec: jobSpec{
			NprocPerNode:        YAMLString(strconv.Itoa(p.NProcPerNode)),
			PytorchReplicaSpecs: replicaSpecs{Master: replica(1)},
		},
	}
	if p.NNodes > 1 {
		job.Spec.PytorchReplicaSpecs.Worker = replica(p.NNodes - 1)
	}
	if len(p.Notes) > 0 {
		job.Metadata.Annotations = map[string]YAMLString{"mimoplan/notes": YAMLString(strings.Join(p.Notes, "\n"))}
	}

	bw := bufio.NewWriter(w)
	p.header(bw, "Apply it with: kubectl apply -f plan.yaml\nThe Master pod runs node rank 0, Worker pod i runs node rank i+1.", "the Master pod")
	p.table(bw, func(n Node) string {
		if n.NodeRank == 0 {
			return name + "-master-0"
		}
		return fmt.Sprintf("%s-worker-%d", name, n.NodeRank-1)
	})
	enc := yaml.NewEncoder(bw)
	enc.SetIndent(2)
	if err := enc.Encode(job); err != nil {
		return fmt.Errorf("encode PyTorchJob: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("encode PyTorchJob: %w", err)
	}
	return bw.Flush()
}
