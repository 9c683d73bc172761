// Package launch turns a valid layout into the commands that start the
// job: one torchrun per node, so placed that every global rank lands where
// the layout put it. It builds a Plan (pure data) and writes it as a shell
// script, JSON, an sbatch script or a Kubeflow PyTorchJob.
package launch

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// Rendezvous backends of torchrun.
const (
	Static = "static"
	C10d   = "c10d"
)

// Defaults.
const (
	DefaultMasterPort = 29500
	DefaultProgram    = "examples/mimo/pretrain_mimo.py"
	// TopologyEnv names the variable that carries the render JSON's path
	// to programs of targets other than megatron-lm.
	TopologyEnv = "MIMOPLAN_TOPOLOGY"
)

// c10dNote is said in every format of a c10d plan.
const c10dNote = "c10d rendezvous: torchrun still gives the node that joins as group rank i the ranks [i*nproc_per_node, (i+1)*nproc_per_node), but nodes get group ranks in the order they join, so which host runs which ranks (and modules) is not fixed; use static rendezvous to pin them"

// EnvVar is one environment variable of the plan.
type EnvVar struct {
	Name  string
	Value string
}

// Options says how to launch. The zero value of a field means its default
// where one is given.
type Options struct {
	// Hosts are the machines, node rank i on Hosts[i]. Nil: a one-node
	// layout runs on localhost; a larger one gets no hosts, which the
	// Slurm and Kubernetes writers do not need (the scheduler picks them),
	// but its Node.Command is then nil.
	Hosts []string
	// HostLines, when the hosts came from a hostfile, are their line
	// numbers, for messages; HostSource names where they came from
	// ("--hosts", or the hostfile's path).
	HostLines  []int
	HostSource string
	// MasterAddr is the static rendezvous master (c10d: the rendezvous
	// endpoint host). Default Hosts[0].
	MasterAddr string
	// MasterPort must be in 1-65535 (the CLI's default is
	// DefaultMasterPort); anything else is an invalid-port diagnostic.
	MasterPort int
	// MasterPortText, when not empty, is the port as the user wrote it (a
	// flag or MIMOPLAN_MASTER_PORT) and replaces MasterPort. It must be
	// decimal digits: "010" is 10, not octal 8, and "abc" an invalid-port
	// diagnostic that names it rather than port 0.
	MasterPortText string
	// Rendezvous is Static (default) or C10d.
	Rendezvous string
	// RendezvousID is c10d's --rdzv-id; default the layout's name, or
	// "mimoplan".
	RendezvousID string
	// Program is the program and its arguments, run by every rank. Empty:
	// DefaultProgram for target megatron-lm, an error otherwise.
	Program []string
	// NoProgram allows a plan without a program, for formats that run
	// none (megatron-specs).
	NoProgram bool
	// LayoutArgs appends the layout as pretrain_mimo.py's arguments
	// (target megatron-lm only), named as the layout's target_version's
	// args.py names them.
	LayoutArgs bool
	// TopologyPath, if set, is the absolute path of the topology file
	// (--topology-out) on a file system every node shares: the plan
	// passes it in MIMOPLAN_TOPOLOGY instead of carrying the topology.
	TopologyPath string
	// OMPThreads is OMP_NUM_THREADS; default 1.
	OMPThreads int
	// Env is added after CUDA_DEVICE_ORDER, OMP_NUM_THREADS and
	// MIMOPLAN_TOPOLOGY; a name given again replaces the earlier value.
	Env []EnvVar
	// Entrypoint is the launcher; default ["torchrun"].
	Entrypoint []string
	// Image is the container image of a Kubernetes plan.
	Image string
	// Files are carried by a Kubernetes plan in a ConfigMap mounted
	// read-only at K8sFilesDir in every pod (preflight's payload and
	// plan), so that the program may name them there.
	Files []CarriedFile
	// Slurm and K8s are the scheduler settings of those formats.
	Slurm SlurmOptions
	K8s   K8sOptions
}

// SlurmOptions are the settings of an sbatch plan.
type SlurmOptions struct {
	// Sbatch are extra directives, "KEY=VALUE" or "KEY" (#SBATCH --KEY).
	Sbatch []string
	// CPUsPerTask is --cpus-per-task (one task per node); 0 leaves it out.
	CPUsPerTask int
	// ContainerImage and ContainerMounts are pyxis's srun flags.
	ContainerImage, ContainerMounts string
}

// K8sOptions are the settings of a Kubernetes plan.
type K8sOptions struct {
	// CPU and Memory are the container's requests ("" leaves them out).
	CPU, Memory string
	// ShmSize is the size limit of the memory emptyDir mounted at
	// /dev/shm ("" for none: the pod's memory bounds it).
	ShmSize string
	// Runtime is the TrainJob's ClusterTrainingRuntime; default
	// DefaultRuntime.
	Runtime string
}

// DefaultRuntime is Kubeflow Trainer's torch runtime
// (manifests/base/runtimes/torch_distributed.yaml).
const DefaultRuntime = "torch-distributed"

// Plan is everything the writers need. Build fills it; its nodes are made
// when asked for (Node, Nodes).
type Plan struct {
	Name         string
	Target       layout.Target
	WorldSize    int
	NNodes       int
	NProcPerNode int
	Rendezvous   Rendezvous
	Entrypoint   []string
	// Program is the program, its arguments, then the layout arguments.
	Program []string
	Env     []EnvVar
	// HostsGiven says the caller named the hosts. Without them a plan of
	// several nodes has no Node.Host or Node.Command (a scheduler will
	// choose the machines), and one of a single node runs on localhost.
	HostsGiven bool
	// MasterGiven says the master address came from the caller (as
	// MasterAddr or the first host), not from the localhost default, so
	// that a scheduler's plan keeps it.
	MasterGiven bool
	// Notes are said in every format: caveats the user must know.
	Notes []string
	// File is the name of the plan's file, which its comments tell to
	// run or submit; "" says plan.sh or plan.slurm (the plan goes to
	// standard output).
	File string
	// Image is the container image (Kubernetes only).
	Image string
	// Files are mounted at K8sFilesDir (Kubernetes only).
	Files []CarriedFile
	// Topology is the topology JSON (Topology).
	Topology []byte
	// PassTopology says the program finds the topology through
	// MIMOPLAN_TOPOLOGY: every target but megatron-lm with its layout
	// arguments, and any plan with --topology-out.
	PassTopology bool
	// TopologyPath, when set, is where the topology lies on a shared file
	// system, so that the plan points there instead of carrying it.
	TopologyPath string
	Slurm        SlurmOptions
	K8s          K8sOptions
	// Version is the layout's target_version.
	Version upstream.Version
	// hosts and spans are what Node makes a node from: node i is on
	// hosts[i], when there is one, and runs the part of each module span
	// that falls in its ranks. No node is stored: a plan of 131,072 nodes
	// holds its host list and a few words, and a writer makes each node
	// as it writes it.
	hosts []string
	spans []ModuleSpan

	topo *topo.Topology
}

// Rendezvous is how the nodes meet.
type Rendezvous struct {
	Backend    string `json:"backend"`
	MasterAddr string `json:"master_addr"`
	MasterPort int    `json:"master_port"`
	ID         string `json:"id,omitempty"` // c10d only
}

// Node is one torchrun.
type Node struct {
	NodeRank  int
	Host      string
	FirstRank int // global ranks [FirstRank, LastRank] run here
	LastRank  int
	Modules   []ModuleSpan
	// Command is the full argv of this node's torchrun.
	Command []string
}

// ModuleSpan is the part of one module that runs on a node.
type ModuleSpan struct {
	Name      string `json:"name"`
	FirstRank int    `json:"first_rank"`
	LastRank  int    `json:"last_rank"`
}

// Build makes the launch plan of a valid layout's topology. Problems with
// the hosts, the master address or the port are diagnostics, in a list for
// the layout's file; the plan is
// nil when there is an error among them. The error is for options that
// cannot be used at all: no program, an unknown rendezvous backend, a
// malformed host or environment variable name.
func Build(t *topo.Topology, o Options) (*Plan, *diag.List, error) {
	if t == nil || t.Layout == nil {
		return nil, nil, errors.New("launch: no topology: the layout is not valid")
	}
	l := t.Layout
	d := &diag.List{File: l.File}

	p := &Plan{Name: t.Name, Target: t.Target, WorldSize: t.WorldSize, NNodes: 1, NProcPerNode: t.WorldSize}
	if t.Cluster != nil {
		p.NNodes, p.NProcPerNode = t.Cluster.Nodes, t.Cluster.GPUsPerNode
	}

	switch o.Rendezvous {
	case "", Static:
		o.Rendezvous = Static
	case C10d:
	default:
		return nil, nil, fmt.Errorf("unknown rendezvous backend %q: want %s or %s", o.Rendezvous, Static, C10d)
	}
	if err := checkHostNames(o); err != nil {
		return nil, nil, err
	}
	hosts := o.Hosts
	if hosts == nil && p.NNodes == 1 {
		hosts = []string{"localhost"}
	}
	p.HostsGiven = o.Hosts != nil
	p.MasterGiven = o.MasterAddr != "" || o.Hosts != nil
	checkHosts(d, l, p.NNodes, hosts, o)

	master := o.MasterAddr
	if master == "" && len(hosts) > 0 {
		master = hosts[0]
	}
	// torchrun's parse_rendezvous_endpoint takes only [\w.:-] for the host.
	if strings.Contains(master, "%") {
		return nil, nil, fmt.Errorf("master address %q has an IPv6 zone, which torchrun's rendezvous does not accept: give one without (--master-addr)", master)
	}
	if master != "" && p.NNodes > 1 && isLoopback(master) {
		d.Add(diag.RuleLoopbackRendezvous, diag.Pos{}, "",
			"give the master's address as the other nodes reach it (a host name or an address of a real interface)",
			"master address %q is a loopback or unspecified address, which the other %d nodes cannot reach", master, p.NNodes-1)
	}
	checkStaticMaster(d, o, hosts)
	port := checkPort(d, o)
	p.Rendezvous = Rendezvous{Backend: o.Rendezvous, MasterAddr: master, MasterPort: port}
	if o.Rendezvous == C10d {
		p.Rendezvous.ID = cmp.Or(o.RendezvousID, t.Name, "mimoplan")
		p.Notes = append(p.Notes, c10dNote)
	}

	prog := slices.Clone(o.Program)
	if len(prog) > 0 && strings.HasPrefix(prog[0], "-") {
		return nil, nil, fmt.Errorf("the first word after -- is the program to run, but %q is an option: give the program first (-- PROGRAM ARGS)", prog[0])
	}
	var err error
	switch {
	case len(prog) > 0:
	case t.Target == layout.TargetMegatronLM:
		prog = []string{DefaultProgram}
	case !o.NoProgram:
		return nil, nil, fmt.Errorf("target %s has no default program: give the program to run (-- PROGRAM ARGS)", t.Target)
	}
	for i, a := range prog {
		if strings.ContainsRune(a, 0) {
			return nil, nil, errors.New("a program argument holds a NUL byte, which no argv can carry")
		}
		if !utf8.ValidString(a) {
			return nil, nil, fmt.Errorf("program argument %d %q is not UTF-8 text, which the json and k8s plans cannot carry unchanged", i, a)
		}
	}
	if o.LayoutArgs && t.Target == layout.TargetMegatronLM {
		if prog, err = megatronProgram(d, t, prog); err != nil {
			return nil, nil, err
		}
	}
	p.Program = prog
	p.Image = o.Image
	p.Files = slices.Clone(o.Files)
	p.Slurm, p.K8s = o.Slurm, o.K8s
	p.Version = l.TargetVersion
	p.TopologyPath = o.TopologyPath
	p.Topology, p.topo = Topology(t), t
	p.PassTopology = t.Target != layout.TargetMegatronLM || !o.LayoutArgs || o.TopologyPath != ""
	p.Entrypoint = slices.Clone(o.Entrypoint)
	if len(p.Entrypoint) == 0 {
		p.Entrypoint = []string{"torchrun"}
	}

	var mimo []EnvVar
	if t.Target == layout.TargetMegatronBridge {
		mimo = BridgeEnv(t)
	}
	layoutEnv(d, l, o.Env)
	env, err := buildEnv(o, append(mimo, layoutEnvVars(l)...))
	if err != nil {
		return nil, nil, err
	}
	p.Env = env

	d.Sort()
	if d.HasErrors() {
		return nil, d, nil
	}
	p.hosts = hosts
	for _, m := range t.Modules {
		p.spans = append(p.spans, ModuleSpan{Name: m.Name, FirstRank: m.RankOffset, LastRank: m.RankOffset + m.NumRanks - 1})
	}
	return p, d, nil
}

// file is the name the plan's comments give its file: File, or def.
func (p *Plan) file(def string) string {
	if p.File == "" {
		return def
	}
	return p.File
}
