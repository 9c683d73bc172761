package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/preflight"
	"github.com/mimoplan/mimoplan/internal/render"
)

func init() { register(newPreflightCmd) }

func newPreflightCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "preflight LAYOUT (--emit DIR | --run)",
		Short: "Prove the layout's process groups on the real GPUs",
		Long: `Write a Python payload and the layout's plan JSON, and print the torchrun
line that runs it on every GPU (--emit DIR), or run it here (--run). Each
rank binds the GPU of its LOCAL_RANK, builds every group of every module in
one global order, checks get_process_group_ranks and a one-hot all-reduce
against the plan, and times one all-reduce per group kind; rank 0 prints one
table. A step that hangs longer than --timeout is reported with the ranks
that did not answer.

  mimoplan preflight layout.yaml --emit pf            prints the torchrun line
  mimoplan preflight layout.yaml --run                runs it on this node
  mimoplan preflight layout.yaml --emit pf --hosts h0,h1   one line per node

Exit codes: 0 every check passed, 1 invalid layout or a check failed,
2 usage error or no launcher (torchrun) to run with, 128+N interrupted by
signal N. See docs/preflight.md.`,
		Args: cobra.ExactArgs(1),
	}
	f := cmd.Flags()
	f.String("emit", "", "write preflight.py and plan.json into this directory and print the torchrun line(s)")
	f.Bool("run", false, "run the payload on this node (one-node layouts)")
	f.String("bytes", "64MiB", "size of the timed all-reduce (0 skips the timing)")
	f.Duration("timeout", preflight.DefaultTimeout, "how long one step may take before it is reported")
	f.Int("iters", preflight.DefaultIters, "timed all-reduces per group kind")
	f.Bool("lazy-init", false, "create NCCL communicators at first use rather than splitting them from the world's")
	f.StringArray("hosts", nil, "several nodes: hosts in node-rank order")
	f.String("master-addr", "", "several nodes: rendezvous master address (default: the first host)")
	f.String("master-port", strconv.Itoa(launch.DefaultMasterPort), "several nodes: rendezvous master port (decimal, 1-65535)")
	f.String("entrypoint", "torchrun", `launcher in the printed lines, e.g. "python3 -m torch.distributed.run"`)
	f.String("format", "lines", "--emit: lines (print each node's torchrun line) or a launch-plan format for the scheduler, written into DIR: "+strings.Join(preflightFormats[1:], ", "))
	f.String("image", "", "--format k8s, pytorchjob: container image (DIR must be at the same path in the pods)")
	cmd.RunE = runPreflight
	return cmd
}

func runPreflight(cmd *cobra.Command, args []string) error {
	v := config(cmd)
	dir, run := v.GetString("emit"), v.GetBool("run")
	if dir == "" && !run {
		return usageErr("preflight needs --emit DIR, --run, or both")
	}
	if err := oneOf("format", v.GetString("format"), preflightFormats...); err != nil {
		return err
	}
	if v.GetString("format") != "lines" {
		if run || dir == "" {
			return usageErr("--format %s writes a plan for the scheduler with --emit DIR, without --run", v.GetString("format"))
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return usageErr("--emit: %v", err)
		}
		dir = abs
	}
	n, err := preflight.ParseBytes(v.GetString("bytes"))
	if err != nil {
		return usageErr("invalid --bytes: %v", err)
	}
	o := preflight.Options{
		Bytes:    n,
		Timeout:  v.GetDuration("timeout"),
		Iters:    v.GetInt("iters"),
		LazyInit: v.GetBool("lazy-init"),
		Launcher: strings.Fields(v.GetString("entrypoint")),
	}
	// One validation, the one the payload mirrors, before anything runs.
	if err := o.Check(); err != nil {
		return usageErr("preflight: %v (--bytes, --timeout, --iters, --entrypoint)", err)
	}
	lo := launch.Options{
		MasterAddr:     v.GetString("master-addr"),
		MasterPortText: v.GetString("master-port"),
		HostSource:     "--hosts",
	}
	if lo.Hosts, err = hostsFlag(cmd); err != nil {
		return err
	}

	res, err := loadValid(cmd, args[0])
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	if err := diag.WriteText(stderr, res.Diags); err != nil {
		return err
	}
	if run && res.Topology.Cluster != nil && res.Topology.Cluster.Nodes > 1 {
		return usageErr("--run starts this node's torchrun only, and the layout has %d nodes: use --emit and run each printed line on its node", res.Topology.Cluster.Nodes)
	}
	if run && !cmd.Flags().Changed("entrypoint") && v.GetString("entrypoint") == "torchrun" {
		if o.Launcher, err = preflight.Launcher(); err != nil {
			return usageErr("--run: %v", err)
		}
	}
	var plan bytes.Buffer
	if err := render.JSON(&plan, res.Topology); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "mimoplan-preflight-")
		if err != nil {
			return fmt.Errorf("temporary directory: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	o.Dir = dir
	if format := v.GetString("format"); format != "lines" {
		return emitPreflightPlan(cmd, res, lo, o, format, plan.Bytes())
	}
	// The lines first: a host problem must not leave files behind.
	nodes, diags, err := preflight.Nodes(res, lo, o)
	if diags != nil && diags.HasErrors() {
		if err := diag.WriteText(stderr, diags); err != nil {
			return err
		}
		return silentExit(exitInvalid)
	}
	if err != nil {
		return usageErr("%v", err)
	}
	if err := preflight.Emit(dir, plan.Bytes()); err != nil {
		return fmt.Errorf("emit: %w", err)
	}

	if !run {
		fmt.Fprintf(stderr, "mimoplan: wrote %s and %s to %s\n", preflight.PayloadFile, preflight.PlanFile, dir)
		w := cmd.OutOrStdout()
		for _, nd := range nodes {
			switch {
			case len(nodes) > 1 && nd.Host != "":
				fmt.Fprintf(w, "# node %d (%s)\n", nd.NodeRank, nd.Host)
			case len(nodes) > 1:
				fmt.Fprintf(w, "# node %d\n", nd.NodeRank)
			}
			fmt.Fprintln(w, preflight.Line(nd.Argv))
		}
		return nil
	}
	fmt.Fprintf(stderr, "+ %s\n", preflight.Line(nodes[0].Argv))
	code, err := preflight.Run(cmd.Context(), nodes[0].Argv, cmd.OutOrStdout(), stderr)
	if err != nil {
		return usageErr("--run: cannot start %s: %v", nodes[0].Argv[0], err)
	}
	return silentExit(code)
}
