package preflight

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// Request is one preflight run as the user asked for it.
type Request struct {
	// Emit is the directory to write the payload and plan into; "" with
	// Run uses a temporary one.
	Emit string
	// Run runs the payload on this node.
	Run bool
	// Format is "lines" (print each node's torchrun line) or a launch-plan
	// format (Formats) whose plan --out writes into Emit; Image is that
	// plan's container image (k8s, pytorchjob).
	Format, Image string
	// Sbatch are the slurm plan's extra #SBATCH directives, as
	// launch-plan's --sbatch.
	Sbatch []string
	// Bytes is the timed all-reduce's size as written ("64MiB").
	Bytes string
	// Options are the payload's settings; Bytes, Dir and Launcher are
	// filled from the fields here.
	Options Options
	// Entrypoint is the launcher command line; EntrypointGiven says the
	// user named it (else --run looks for torchrun or python3 -m
	// torch.distributed.run).
	Entrypoint      string
	EntrypointGiven bool
	// Hosts (as --hosts gives them), MasterAddr and MasterPortText place
	// the nodes of a layout of several.
	Hosts          []string
	MasterAddr     string
	MasterPortText string
	// WritePlan writes the layout's plan JSON.
	WritePlan func(io.Writer) error
	// Launcher finds the launcher on this machine; nil is Launcher.
	Launcher func() ([]string, error)
	// Start runs argv and returns its exit status; nil is Run.
	Start func(ctx context.Context, argv []string, stdout, stderr io.Writer) (int, error)
}

// Check refuses settings that contradict one another before any layout
// is read. Its errors are usage errors (exit 2).
func (r *Request) Check() (launch.Options, error) {
	if r.Emit == "" && !r.Run {
		return launch.Options{}, exitcode.Usagef("preflight needs --out DIR, --run, or both")
	}
	if r.Format != "lines" {
		if r.Run || r.Emit == "" {
			return launch.Options{}, exitcode.Usagef("--format %s writes a plan for the scheduler with --out DIR, without --run", r.Format)
		}
		abs, err := filepath.Abs(r.Emit)
		if err != nil {
			return launch.Options{}, exitcode.Usagef("--out: %v", err)
		}
		r.Emit = abs
	}
	if len(r.Sbatch) > 0 && r.Format != "slurm" {
		return launch.Options{}, exitcode.Usagef("--sbatch is for --format slurm, not %s", r.Format)
	}
	if err := launch.CheckSbatch(r.Sbatch); err != nil {
		return launch.Options{}, exitcode.Usagef("%v", err)
	}
	n, err := ParseBytes(r.Bytes)
	if err != nil {
		return launch.Options{}, exitcode.Usagef("invalid --bytes: %v", err)
	}
	r.Options.Bytes = n
	r.Options.Launcher = strings.Fields(r.Entrypoint)
	// One validation, the one the payload mirrors, before anything runs.
	if err := r.Options.Check(); err != nil {
		return launch.Options{}, exitcode.Usagef("preflight: %v (--bytes, --timeout, --iters, --entrypoint)", err)
	}
	lo := launch.Options{MasterAddr: r.MasterAddr, MasterPortText: r.MasterPortText, HostSource: "--hosts",
		Slurm: launch.SlurmOptions{Sbatch: r.Sbatch}}
	if lo.Hosts, err = launch.SplitHosts(r.Hosts); err != nil {
		return launch.Options{}, err
	}
	return lo, nil
}

// Execute writes the payload and the plan and prints the torchrun lines
// (Emit), or runs the line of this node (Run), for a valid layout. lo,
// from Check, places the nodes. The exit status of a run comes back as
// the error's exit code.
func Execute(ctx context.Context, stdout, stderr io.Writer, t *topo.Topology, warnings *diag.List, r Request, lo launch.Options) error {
	if err := diag.WriteText(stderr, warnings); err != nil {
		return err
	}
	if r.Run && t.Cluster != nil && t.Cluster.Nodes > 1 {
		return exitcode.Usagef("--run starts this node's torchrun only, and the layout has %d nodes: use --out DIR and run each printed line on its node", t.Cluster.Nodes)
	}
	o := r.Options
	if r.Run && !r.EntrypointGiven && r.Entrypoint == "torchrun" {
		var err error
		find := r.Launcher
		if find == nil {
			find = Launcher
		}
		if o.Launcher, err = find(); err != nil {
			return exitcode.Usagef("--run: %v", err)
		}
	}
	dir := r.Emit
	if dir == "" {
		tmp, err := os.MkdirTemp("", "mimoplan-preflight-")
		if err != nil {
			return fmt.Errorf("temporary directory: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	o.Dir = dir
	if r.Format != "lines" {
		return emitPlan(stdout, stderr, t, lo, o, r.Format, r.Image, r.WritePlan)
	}
	// The lines first: a host problem must not leave files behind.
	nodes, diags, err := Nodes(t, lo, o)
	if diags != nil && diags.HasErrors() {
		if err := diag.WriteText(stderr, diags); err != nil {
			return err
		}
		return exitcode.Silent(exitcode.Invalid)
	}
	if err != nil {
		return exitcode.Usagef("%v", err)
	}
	if err := EmitWith(dir, r.WritePlan); err != nil {
		return fmt.Errorf("emit: %w", err)
	}
	if !r.Run {
		fmt.Fprintf(stderr, "mimoplan: wrote %s and %s to %s\n", PayloadFile, PlanFile, dir)
		for _, nd := range nodes {
			switch {
			case len(nodes) > 1 && nd.Host != "":
				fmt.Fprintf(stdout, "# node %d (%s)\n", nd.NodeRank, nd.Host)
			case len(nodes) > 1:
				fmt.Fprintf(stdout, "# node %d\n", nd.NodeRank)
			}
			fmt.Fprintln(stdout, Line(nd.Argv))
		}
		return nil
	}
	fmt.Fprintf(stderr, "+ %s\n", Line(nodes[0].Argv))
	start := r.Start
	if start == nil {
		start = Run
	}
	code, err := start(ctx, nodes[0].Argv, stdout, stderr)
	if err != nil {
		return exitcode.Usagef("--run: cannot start %s: %v", nodes[0].Argv[0], err)
	}
	return exitcode.Silent(code)
}
