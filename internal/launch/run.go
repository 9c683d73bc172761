package launch

import (
	"fmt"
	"github.com/mimoplan/mimoplan/internal/atomicfile"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// Request is one launch-plan run: the settings as the user gave them, and
// where the plan and the topology go.
type Request struct {
	// LayoutPath is the layout's file, which no output may overwrite.
	LayoutPath string
	Format     string
	// Out is the plan's file; "" writes it to Stdout.
	Out string
	// TopologyOut is where the topology JSON goes, on a file system every
	// node shares; "" writes none (the plan carries the topology).
	TopologyOut string
	// Hostfile and Hosts name the machines (one of them, or neither);
	// Hosts as --hosts gives them (see SplitHosts).
	Hostfile string
	Hosts    []string
	// Env are NAME=VALUE texts; Entrypoint the launcher command line.
	Env        []string
	Entrypoint string
	// Options are the plan settings; Hosts, HostLines, HostSource, Env,
	// Entrypoint, NoProgram and TopologyPath are filled from the fields
	// above.
	Options Options
}

// Check refuses settings that contradict one another before any layout is
// read. Its errors are usage errors (exit 2).
func (r *Request) Check() error {
	o := &r.Options
	if o.OMPThreads < 1 {
		return exitcode.Usagef("invalid --omp-num-threads %d: want 1 or more", o.OMPThreads)
	}
	if o.Entrypoint = strings.Fields(r.Entrypoint); len(o.Entrypoint) == 0 {
		return exitcode.Usagef("--entrypoint is empty")
	}
	o.Env = nil
	for _, kv := range r.Env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return exitcode.Usagef("invalid --env %q: want NAME=VALUE", kv)
		}
		o.Env = append(o.Env, EnvVar{Name: name, Value: value})
	}
	hosts, err := SplitHosts(r.Hosts)
	if err != nil {
		return err
	}
	r.Hosts = hosts
	if len(r.Hosts) > 0 && r.Hostfile != "" {
		return exitcode.Usagef("give --hosts or --hostfile, not both")
	}
	if r.Format == "k8s" || r.Format == "pytorchjob" {
		if len(r.Hosts) > 0 || r.Hostfile != "" || o.MasterAddr != "" {
			return exitcode.Usagef("--format %s: the training operator names the pods and sets the master address; drop --hosts, --hostfile and --master-addr", r.Format)
		}
		if o.Image == "" {
			return exitcode.Usagef("--format %s needs --image", r.Format)
		}
	}
	if err := checkScheduler(o); err != nil {
		return err
	}
	o.NoProgram = r.Format == "megatron-specs" || r.Format == "bridge"
	return nil
}

// quantity is a Kubernetes resource quantity (resource.Quantity's form).
var quantity = regexp.MustCompile(`^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$`)

// dnsSubdomain is a Kubernetes object name of the ClusterTrainingRuntime
// kind.
var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// checkScheduler checks the Slurm and Kubernetes settings.
func checkScheduler(o *Options) error {
	if err := CheckSbatch(o.Slurm.Sbatch); err != nil {
		return exitcode.Usagef("%v", err)
	}
	if o.Slurm.CPUsPerTask < 0 {
		return exitcode.Usagef("invalid --cpus-per-task %d: want 1 or more", o.Slurm.CPUsPerTask)
	}
	for _, q := range []struct{ flag, value string }{{"cpu", o.K8s.CPU}, {"memory", o.K8s.Memory}, {"shm-size", o.K8s.ShmSize}} {
		if q.value != "" && !quantity.MatchString(q.value) {
			return exitcode.Usagef("invalid --%s %q: want a Kubernetes quantity such as 32, 500m, 512Gi", q.flag, q.value)
		}
	}
	if len(o.K8s.Runtime) > 253 || !dnsSubdomain.MatchString(o.K8s.Runtime) {
		return exitcode.Usagef("invalid --runtime %q: want a Kubernetes object name", o.K8s.Runtime)
	}
	return nil
}

// SplitHosts reads --hosts values: comma-separated or repeated, spaces
// around a name dropped, an empty name a usage error. The flag is a string
// array, whose values arrive as given: pflag's string slice reads its text
// as CSV, whose one record ends at the first line break, so that
// "n0,n1\nn2" silently lost n2. Here the whole text is split on commas,
// and a name with a line break in it is refused by the host name check.
func SplitHosts(values []string) ([]string, error) {
	var hosts []string
	for _, h := range values {
		for _, part := range strings.Split(h, ",") {
			if part = strings.TrimSpace(part); part == "" {
				return nil, exitcode.Usagef("--hosts has an empty host name")
			}
			hosts = append(hosts, part)
		}
	}
	return hosts, nil
}

// Run builds the plan of a valid layout and writes it, with the topology
// file when the program needs one. Warnings and the files written are
// reported on stderr; problems with the hosts are diagnostics (exit 1).
// The plan is checked before any file is touched; then the topology and
// the plan file are written together or not at all (WriteFiles checks
// every target first), so that a plan that cannot be written leaves no new
// topology behind. The plan is streamed, never held: a plan of 131,072
// nodes is 84 MB of JSON.
func Run(stdout, stderr io.Writer, t *topo.Topology, warnings *diag.List, r Request) error {
	// A valid layout may still have warnings (a tp group across nodes):
	// worth seeing before the job starts.
	if err := diag.WriteText(stderr, warnings); err != nil {
		return err
	}
	if err := r.resolveHosts(t); err != nil {
		return err
	}
	topoPath, err := r.topologyPath()
	if err != nil {
		return err
	}
	plan, diags, err := Build(t, r.Options)
	if err != nil {
		return exitcode.Usagef("%v", err)
	}
	if diags.HasErrors() {
		if err := diag.WriteText(stderr, diags); err != nil {
			return err
		}
		return exitcode.Silent(exitcode.Invalid)
	}
	if err := Check(r.Format, plan); err != nil {
		return exitcode.Usagef("%v", err)
	}
	var files []atomicfile.File
	if topoPath != "" {
		files = append(files, atomicfile.File{Path: topoPath, Mode: 0o644, Write: func(w io.Writer) error {
			_, err := w.Write(plan.Topology)
			return err
		}})
	}
	if r.Out != "" {
		plan.File = filepath.Base(r.Out)
		files = append(files, atomicfile.File{Path: r.Out, Mode: FileMode(r.Format), Write: func(w io.Writer) error {
			return Write(w, r.Format, plan)
		}})
	}
	if err := atomicfile.WriteFiles(files...); err != nil {
		return exitcode.Usagef("%v", err)
	}
	if topoPath != "" {
		fmt.Fprintf(stderr, "mimoplan: wrote the topology to %s\n", topoPath)
	}
	if r.Out == "" {
		return Write(stdout, r.Format, plan)
	}
	fmt.Fprintf(stderr, "mimoplan: wrote the %s plan to %s\n", r.Format, r.Out)
	return nil
}

// resolveHosts reads the hostfile, if any, and insists on hosts where the
// format needs them: sh and json name every host; Slurm and Kubernetes
// pick the machines themselves.
func (r *Request) resolveHosts(t *topo.Topology) error {
	nnodes, gpus := t.Nodes()
	o := &r.Options
	switch {
	case r.Hostfile != "":
		f, err := layout.OpenRegular(r.Hostfile)
		if err != nil {
			return exitcode.Usagef("read hostfile: %v", err)
		}
		defer f.Close()
		hf, err := ParseHostfile(f)
		if err != nil {
			return exitcode.Usagef("hostfile %s: %v", r.Hostfile, err)
		}
		if err := hf.CheckSlots(gpus); err != nil {
			return exitcode.Wrap(exitcode.Invalid, fmt.Errorf("hostfile %s: %w", r.Hostfile, err))
		}
		if len(hf.Hosts) == 0 {
			return exitcode.Usagef("hostfile %s lists no hosts", r.Hostfile)
		}
		o.Hosts, o.HostLines, o.HostSource = hf.Hosts, hf.Lines, r.Hostfile
	case len(r.Hosts) > 0:
		o.Hosts, o.HostSource = r.Hosts, "--hosts"
	case nnodes > 1 && (r.Format == "sh" || r.Format == "json"):
		return exitcode.Usagef("the layout has %d nodes: give their hosts with --hosts or --hostfile (or use --format slurm or k8s)", nnodes)
	}
	return nil
}

// topologyPath checks Out and TopologyOut: the topology file is written
// only when asked for, and its absolute path is then what
// MIMOPLAN_TOPOLOGY names (a file system every node shares); otherwise the
// plan carries the topology itself.
func (r *Request) topologyPath() (string, error) {
	if r.Out != "" && atomicfile.SameFile(r.Out, r.LayoutPath) {
		return "", exitcode.Usagef("--out %s is the layout file: writing there would overwrite the layout", r.Out)
	}
	path := r.TopologyOut
	if path == "" {
		return "", nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", exitcode.Usagef("topology path: %v", err)
	}
	if atomicfile.SameFile(path, r.LayoutPath) {
		return "", exitcode.Usagef("the topology file %s is the layout file: writing there would overwrite the layout", path)
	}
	if r.Out != "" && atomicfile.SameFile(path, r.Out) {
		return "", exitcode.Usagef("--topology-out and --out are the same file, %s: the plan would overwrite the topology", r.Out)
	}
	r.Options.TopologyPath = abs
	return path, nil
}
