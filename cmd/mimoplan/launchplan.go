package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func init() { register(newLaunchPlanCmd) }

func newLaunchPlanCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "launch-plan LAYOUT|- [-- PROGRAM ARGS...]",
		Short: "Print the torchrun commands that start the job",
		Long: `Turn a valid layout into the commands that start it: one torchrun per node,
with static rendezvous (--node-rank, --master-addr) so that node i runs the
global ranks [i*gpus_per_node, (i+1)*gpus_per_node) the layout gave it.

  mimoplan launch-plan layout.yaml --hosts h0,h1,h2,h3 -- train.py --lr 1e-4
  mimoplan launch-plan layout.yaml --hostfile hosts.txt --format json
  mimoplan launch-plan layout.yaml --format slurm --out job.sbatch -- train.py
  mimoplan launch-plan layout.yaml --format k8s --image REGISTRY/IMAGE:TAG -- train.py

Formats: sh (a script taking the node rank), json, slurm (sbatch), k8s
(Kubeflow Trainer v2 TrainJob), pytorchjob (Kubeflow PyTorchJob v1),
megatron-specs (the Python that builds the layout's ModuleGridSpecs),
bridge (target megatron-bridge: the Python that builds its
MegatronMIMOParallelismConfig, and the MIMO_* variables). For
target megatron-lm the program defaults to examples/mimo/pretrain_mimo.py
and the layout is appended as its arguments; for other targets the plan
carries the layout's topology (the scripts write it on every node at run
time, Kubernetes mounts it from a ConfigMap) and passes its path in
MIMOPLAN_TOPOLOGY. Nothing is written but --out and --topology-out. LAYOUT
'-' reads standard input. See docs/launch.md.

--probe also checks this machine's GPUs as one node of the layout (see
validate --probe) and writes no plan when they fall short.

Exit codes: 0 plan written, 1 invalid layout or hosts (or, with --probe,
GPUs), 2 usage error, 3 --probe without an NVIDIA driver or NVML.`,
		Args: launchPlanArgs,
	}
	f := cmd.Flags()
	f.StringArray("hosts", nil, "hosts in node-rank order (comma-separated or repeated)")
	f.String("hostfile", "", "file with one host per line ('#' comments, optional slots=N)")
	f.String("master-addr", "", "rendezvous master address (default: the first host)")
	// A string, not an Int: pflag and viper read "010" as octal 8.
	f.String("master-port", strconv.Itoa(launch.DefaultMasterPort), "rendezvous master port (decimal, 1-65535)")
	f.String("rendezvous", launch.Static, "torchrun rendezvous: static (pins hosts to ranks) or c10d")
	f.String("format", "sh", "plan format: "+strings.Join(launch.Formats, ", "))
	f.String("out", "", "write the plan to this file, atomically (default: standard output)")
	f.String("topology-out", "", "also write the topology JSON here, on a file system every node shares, and pass this path in MIMOPLAN_TOPOLOGY")
	f.StringArray("env", nil, "extra environment variable NAME=VALUE for every rank (repeatable)")
	f.Bool("no-layout-args", false, "target megatron-lm: do not append the layout as pretrain_mimo.py arguments")
	f.Int("omp-num-threads", 1, "OMP_NUM_THREADS for every rank")
	f.String("entrypoint", "torchrun", `launcher command, e.g. "python -m torch.distributed.run"`)
	f.String("image", "", "container image (--format k8s, pytorchjob)")
	addSchedulerFlags(cmd)
	addTargetVersionFlag(cmd)
	addProbeFlag(cmd)
	cmd.RunE = runLaunchPlan
	return cmd
}

// launchPlanArgs accepts one layout before the optional "--".
func launchPlanArgs(cmd *cobra.Command, args []string) error {
	n := len(args)
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		n = dash
	}
	if n != 1 {
		return usageErr("launch-plan takes one LAYOUT (then -- PROGRAM ARGS); got %d arguments before --", n)
	}
	return nil
}

// hostsFlag reads --hosts (or MIMOPLAN_HOSTS): comma-separated or
// repeated, spaces around a name dropped, an empty name a usage error.
// The flag is a string array read by arrayFlag: pflag's string slice
// reads its text as CSV, whose one record ends at the first line break,
// so that "n0,n1\nn2" silently lost n2. Here the whole text is split on
// commas, and a name with a line break in it is refused by the host name
// check.
func hostsFlag(cmd *cobra.Command) ([]string, error) {
	var hosts []string
	for _, h := range arrayFlag(cmd, "hosts") {
		for _, part := range strings.Split(h, ",") {
			if part = strings.TrimSpace(part); part == "" {
				return nil, usageErr("--hosts has an empty host name")
			}
			hosts = append(hosts, part)
		}
	}
	return hosts, nil
}

// arrayFlag returns a string array flag's values exactly as given. Not
// through viper or pflag's GetStringArray: both read the values back from
// their CSV text, which turns "\r\n" into "\n" and ends a record at a
// line break.
func arrayFlag(cmd *cobra.Command, name string) []string {
	if f := cmd.Flags().Lookup(name); f != nil {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			return sv.GetSlice()
		}
	}
	return nil
}

// launchFlags are the launch-plan settings read from flags and MIMOPLAN_*.
type launchFlags struct {
	format, out, topologyOut, hostfile string
	hosts                              []string
	opts                               launch.Options
}

func readLaunchFlags(cmd *cobra.Command, v *viper.Viper, args []string) (*launchFlags, error) {
	lf := &launchFlags{
		format:      v.GetString("format"),
		out:         v.GetString("out"),
		topologyOut: v.GetString("topology-out"),
		hostfile:    v.GetString("hostfile"),
	}
	if err := oneOf("format", lf.format, launch.Formats...); err != nil {
		return nil, err
	}
	o := &lf.opts
	o.Rendezvous = v.GetString("rendezvous")
	if err := oneOf("rendezvous", o.Rendezvous, launch.Static, launch.C10d); err != nil {
		return nil, err
	}
	o.MasterAddr = v.GetString("master-addr")
	o.MasterPortText = v.GetString("master-port")
	o.LayoutArgs = !v.GetBool("no-layout-args")
	o.Image = v.GetString("image")
	if o.OMPThreads = v.GetInt("omp-num-threads"); o.OMPThreads < 1 {
		return nil, usageErr("invalid --omp-num-threads %d: want 1 or more", o.OMPThreads)
	}
	o.Entrypoint = strings.Fields(v.GetString("entrypoint"))
	if len(o.Entrypoint) == 0 {
		return nil, usageErr("--entrypoint is empty")
	}
	for _, kv := range arrayFlag(cmd, "env") {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, usageErr("invalid --env %q: want NAME=VALUE", kv)
		}
		o.Env = append(o.Env, launch.EnvVar{Name: name, Value: value})
	}
	hosts, err := hostsFlag(cmd)
	if err != nil {
		return nil, err
	}
	lf.hosts = hosts
	if len(lf.hosts) > 0 && lf.hostfile != "" {
		return nil, usageErr("give --hosts or --hostfile, not both")
	}
	if lf.format == "k8s" || lf.format == "pytorchjob" {
		if len(lf.hosts) > 0 || lf.hostfile != "" || o.MasterAddr != "" {
			return nil, usageErr("--format %s: the training operator names the pods and sets the master address; drop --hosts, --hostfile and --master-addr", lf.format)
		}
		if o.Image == "" {
			return nil, usageErr("--format %s needs --image", lf.format)
		}
	}
	if err := readSchedulerFlags(cmd, v, o); err != nil {
		return nil, err
	}
	o.NoProgram = lf.format == "megatron-specs" || lf.format == "bridge"
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		o.Program = args[dash:]
	}
	return lf, nil
}

func runLaunchPlan(cmd *cobra.Command, args []string) error {
	v := config(cmd)
	lf, err := readLaunchFlags(cmd, v, args)
	if err != nil {
		return err
	}
	res, err := loadValid(cmd, args[0])
	if err != nil {
		return err
	}
	// A valid layout may still have warnings (a tp group across nodes):
	// worth seeing before the job starts.
	if err := diag.WriteText(cmd.ErrOrStderr(), res.Diags); err != nil {
		return err
	}
	if err := lf.resolveHosts(res.Topology); err != nil {
		return err
	}
	topoPath, err := lf.topologyPath(args[0])
	if err != nil {
		return err
	}
	plan, diags, err := launch.Build(res, lf.opts)
	if err != nil {
		return usageErr("%v", err)
	}
	if diags.HasErrors() {
		if err := diag.WriteText(cmd.ErrOrStderr(), diags); err != nil {
			return err
		}
		return silentExit(exitInvalid)
	}
	// The plan is checked before any file is touched; then the topology
	// and the plan file are written together or not at all (WriteFiles
	// checks every target first), so that a plan that cannot be written
	// leaves no new topology behind. The plan is streamed, never held: a
	// plan of 131,072 nodes is 84 MB of JSON.
	if err := launch.Check(lf.format, plan); err != nil {
		return usageErr("%v", err)
	}
	var files []launch.File
	if topoPath != "" {
		files = append(files, launch.File{Path: topoPath, Mode: 0o644, Write: func(w io.Writer) error {
			_, err := w.Write(plan.Topology)
			return err
		}})
	}
	if lf.out != "" {
		files = append(files, launch.File{Path: lf.out, Mode: launch.FileMode(lf.format), Write: func(w io.Writer) error {
			return launch.Write(w, lf.format, plan)
		}})
	}
	if err := launch.WriteFiles(files...); err != nil {
		return usageErr("%v", err)
	}
	if topoPath != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "mimoplan: wrote the topology to %s\n", topoPath)
	}
	if lf.out == "" {
		return launch.Write(cmd.OutOrStdout(), lf.format, plan)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "mimoplan: wrote the %s plan to %s\n", lf.format, lf.out)
	return nil
}

// resolveHosts reads the hostfile, if any, and insists on hosts where the
// format needs them: sh and json name every host; Slurm and Kubernetes
// pick the machines themselves.
func (lf *launchFlags) resolveHosts(t *validate.Topology) error {
	nnodes, gpus := 1, t.WorldSize
	if t.Cluster != nil {
		nnodes, gpus = t.Cluster.Nodes, t.Cluster.GPUsPerNode
	}
	o := &lf.opts
	switch {
	case lf.hostfile != "":
		f, err := os.Open(lf.hostfile)
		if err != nil {
			return usageErr("read hostfile: %v", err)
		}
		defer f.Close()
		hf, err := launch.ParseHostfile(f)
		if err != nil {
			return usageErr("hostfile %s: %v", lf.hostfile, err)
		}
		if err := hf.CheckSlots(gpus); err != nil {
			return &exitError{code: exitInvalid, err: fmt.Errorf("hostfile %s: %w", lf.hostfile, err)}
		}
		if len(hf.Hosts) == 0 {
			return usageErr("hostfile %s lists no hosts", lf.hostfile)
		}
		o.Hosts, o.HostLines, o.HostSource = hf.Hosts, hf.Lines, lf.hostfile
	case len(lf.hosts) > 0:
		o.Hosts, o.HostSource = lf.hosts, "--hosts"
	case nnodes > 1 && (lf.format == "sh" || lf.format == "json"):
		return usageErr("the layout has %d nodes: give their hosts with --hosts or --hostfile (or use --format slurm or k8s)", nnodes)
	}
	return nil
}

// topologyPath checks --out and --topology-out: the topology file is
// written only when asked for, and its absolute path is then what
// MIMOPLAN_TOPOLOGY names (a file system every node shares); otherwise
// the plan carries the topology itself.
func (lf *launchFlags) topologyPath(layoutPath string) (string, error) {
	if lf.out != "" && launch.SameFile(lf.out, layoutPath) {
		return "", usageErr("--out %s is the layout file: writing there would overwrite the layout", lf.out)
	}
	path := lf.topologyOut
	if path == "" {
		return "", nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", usageErr("topology path: %v", err)
	}
	if launch.SameFile(path, layoutPath) {
		return "", usageErr("the topology file %s is the layout file: writing there would overwrite the layout", path)
	}
	if lf.out != "" && launch.SameFile(path, lf.out) {
		return "", usageErr("--topology-out and --out are the same file, %s: the plan would overwrite the topology", lf.out)
	}
	lf.opts.TopologyPath = abs
	return path, nil
}
