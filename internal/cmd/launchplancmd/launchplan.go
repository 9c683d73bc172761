// Package launchplancmd is the launch-plan command.
package launchplancmd

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
	"github.com/mimoplan/mimoplan/internal/launch"
)

// Options are launch-plan's settings.
type Options struct {
	IO         *cmdutil.IOStreams
	ProbeLocal func() (*gpuprobe.Snapshot, error)

	Request launch.Request
	// NoLayoutArgs turns Request.Options.LayoutArgs off.
	NoLayoutArgs bool
	Layout       cmdutil.LayoutFlags
}

// NewCmdLaunchPlan returns the launch-plan command; runF, when not nil,
// runs in place of launchPlanRun.
func NewCmdLaunchPlan(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, ProbeLocal: f.ProbeLocal}
	r, o := &opts.Request, &opts.Request.Options
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
		Args: cmdutil.ArgsBeforeDash(1, "launch-plan takes one LAYOUT (then -- PROGRAM ARGS)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r.LayoutPath = args[0]
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				o.Program = args[dash:]
			}
			o.LayoutArgs = !opts.NoLayoutArgs
			if r.Format == "k8s" || r.Format == "pytorchjob" {
				// The operator names the pods: hosts from the config file
				// or MIMOPLAN_* do not apply (from the command line they
				// are refused).
				if err := cmdutil.DropDefaults(cmd.Flags(), "hosts", "hostfile", "master-addr"); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return launchPlanRun(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&r.Hosts, "hosts", nil, "hosts in node-rank order (comma-separated or repeated)")
	fs.StringVar(&r.Hostfile, "hostfile", "", "file with one host per line ('#' comments, optional slots=N)")
	fs.StringVar(&o.MasterAddr, "master-addr", "", "rendezvous master address (default: the first host)")
	// A string, not an Int: pflag reads "010" as octal 8.
	cmdutil.PortVar(fs, &o.MasterPortText, "master-port", strconv.Itoa(launch.DefaultMasterPort), "rendezvous master port (decimal, 1-65535)")
	cmdutil.StringEnumVar(fs, &o.Rendezvous, "rendezvous", launch.Static, "torchrun rendezvous: static (pins hosts to ranks) or c10d", launch.Static, launch.C10d)
	cmdutil.StringEnumVar(fs, &r.Format, "format", "sh", "plan format: "+strings.Join(launch.Formats, ", "), launch.Formats...)
	fs.StringVar(&r.Out, "out", "", "write the plan to this file, atomically (default: standard output)")
	fs.StringVar(&r.TopologyOut, "topology-out", "", "also write the topology JSON here, on a file system every node shares, and pass this path in MIMOPLAN_TOPOLOGY")
	fs.StringArrayVar(&r.Env, "env", nil, "extra environment variable NAME=VALUE for every rank (repeatable)")
	fs.BoolVar(&opts.NoLayoutArgs, "no-layout-args", false, "target megatron-lm: do not append the layout as pretrain_mimo.py arguments")
	fs.IntVar(&o.OMPThreads, "omp-num-threads", 1, "OMP_NUM_THREADS for every rank")
	fs.StringVar(&r.Entrypoint, "entrypoint", "torchrun", `launcher command, e.g. "python -m torch.distributed.run"`)
	fs.StringVar(&o.Image, "image", "", "container image (--format k8s, pytorchjob)")
	fs.StringArrayVar(&o.Slurm.Sbatch, "sbatch", nil, "--format slurm: extra #SBATCH directive KEY=VALUE or KEY (partition=gpu, account=a, time=4:00:00, exclusive; repeatable)")
	fs.IntVar(&o.Slurm.CPUsPerTask, "cpus-per-task", 0, "--format slurm: CPUs per node's task (#SBATCH --cpus-per-task)")
	fs.StringVar(&o.Slurm.ContainerImage, "container-image", "", "--format slurm: pyxis srun --container-image")
	fs.StringVar(&o.Slurm.ContainerMounts, "container-mounts", "", "--format slurm: pyxis srun --container-mounts (SRC:DST[,...])")
	fs.StringVar(&o.K8s.CPU, "cpu", "", "--format k8s, pytorchjob: cpu request per pod (e.g. 32)")
	fs.StringVar(&o.K8s.Memory, "memory", "", "--format k8s, pytorchjob: memory request per pod (e.g. 512Gi)")
	fs.StringVar(&o.K8s.ShmSize, "shm-size", "", "--format k8s, pytorchjob: size limit of /dev/shm, a memory emptyDir (e.g. 64Gi; default none)")
	fs.StringVar(&o.K8s.Runtime, "runtime", launch.DefaultRuntime, "--format k8s: the TrainJob's ClusterTrainingRuntime")
	opts.Layout.Bind(fs)
	cmd.MarkFlagsMutuallyExclusive("hosts", "hostfile")
	return cmd
}

func launchPlanRun(opts *Options) error {
	r := opts.Request
	if err := r.Check(); err != nil {
		return err
	}
	loader, err := opts.Layout.NewLoader(opts.ProbeLocal, opts.IO.In)
	if err != nil {
		return err
	}
	res, err := loader.LoadValid(opts.IO.ErrOut, r.LayoutPath)
	if err != nil {
		return err
	}
	return launch.Run(opts.IO.Out, opts.IO.ErrOut, res.Topology, res.Diags, r)
}
