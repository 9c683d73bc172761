package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/preflight"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// preflightFormats are preflight --emit's output: the torchrun lines, or a
// launch-plan format that runs the payload on every node.
var preflightFormats = []string{"lines", "sh", "slurm", "k8s", "pytorchjob"}

// preflightPlanFile names the plan --emit writes for each format.
var preflightPlanFile = map[string]string{"sh": "preflight.sh", "slurm": "preflight.slurm", "k8s": "preflight.yaml", "pytorchjob": "preflight.yaml"}

// emitPreflightPlan writes a launch plan in format that runs the payload
// (o.Dir, absolute, holds it and plan.json) on every node: one sbatch
// script or one Kubernetes job rather than a line per node.
func emitPreflightPlan(cmd *cobra.Command, res *validate.Result, lo launch.Options, o preflight.Options, format string, planJSON []byte) error {
	v := config(cmd)
	lo.Rendezvous = launch.Static
	lo.Program = preflight.Program(o)
	lo.Entrypoint = o.Launcher
	lo.Image = v.GetString("image")
	if (format == "k8s" || format == "pytorchjob") && (lo.Image == "" || len(lo.Hosts) > 0 || lo.MasterAddr != "") {
		return usageErr("--format %s needs --image, and the operator names the pods: drop --hosts and --master-addr", format)
	}
	if format == "sh" && len(lo.Hosts) == 0 && res.Topology.Cluster != nil && res.Topology.Cluster.Nodes > 1 {
		return usageErr("--format sh: the layout has %d nodes: give their hosts with --hosts", res.Topology.Cluster.Nodes)
	}
	plan, d, err := launch.Build(res, lo)
	if err != nil {
		return usageErr("%v", err)
	}
	if d.HasErrors() {
		if err := diag.WriteText(cmd.ErrOrStderr(), d); err != nil {
			return err
		}
		return silentExit(exitInvalid)
	}
	var buf bytes.Buffer
	if err := launch.Write(&buf, format, plan); err != nil {
		return usageErr("%v", err)
	}
	// Files only once the plan is made: a refused plan leaves nothing.
	if err := preflight.Emit(o.Dir, planJSON); err != nil {
		return fmt.Errorf("emit: %w", err)
	}
	path := filepath.Join(o.Dir, preflightPlanFile[format])
	if err := launch.WriteFile(path, launch.FileMode(format), func(w io.Writer) error {
		_, err := buf.WriteTo(w)
		return err
	}); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "mimoplan: wrote %s, %s and the %s plan %s to %s\n", preflight.PayloadFile, preflight.PlanFile, format, filepath.Base(path), o.Dir)
	fmt.Fprintln(cmd.OutOrStdout(), path)
	return nil
}
