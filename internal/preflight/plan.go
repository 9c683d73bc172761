package preflight

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/mimoplan/mimoplan/internal/atomicfile"
	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/topo"
)

// Formats are preflight --out's output: the torchrun lines, or a
// launch-plan format that runs the payload on every node.
var Formats = []string{"lines", "sh", "slurm", "k8s", "pytorchjob"}

// planFile names the plan --out writes for each format.
var planFile = map[string]string{"sh": "preflight.sh", "slurm": "preflight.slurm", "k8s": "preflight.yaml", "pytorchjob": "preflight.yaml"}

// emitPlan writes a launch plan in format that runs the payload (o.Dir,
// absolute, holds it and plan.json) on every node: one sbatch script or
// one Kubernetes job rather than a line per node.
func emitPlan(stdout, stderr io.Writer, t *topo.Topology, lo launch.Options, o Options, format, image string, writePlan func(io.Writer) error) error {
	lo.Rendezvous = launch.Static
	prog, note := o, ""
	if format == "k8s" || format == "pytorchjob" {
		// The pods get the payload and plan from a ConfigMap, not from
		// o.Dir, which they may not have; a plan too large for one is
		// read from o.Dir, which must then be at that path in every pod.
		// It is held only up to that size.
		planJSON := &cappedBuffer{max: launch.MaxConfigMapBytes - len(Payload)}
		err := writePlan(planJSON)
		switch {
		case err == nil:
			lo.Files = []launch.CarriedFile{{Name: PayloadFile, Data: Payload}, {Name: PlanFile, Data: planJSON.Bytes()}}
			prog.Dir = launch.K8sFilesDir
		case errors.Is(err, errTooBig):
			note = fmt.Sprintf("%s and %s (more than %d bytes) exceed a ConfigMap's %d bytes: the pods read them from %s, which must be mounted at that path in every pod",
				PayloadFile, PlanFile, launch.MaxConfigMapBytes, launch.MaxConfigMapBytes, o.Dir)
		default:
			return fmt.Errorf("render: %w", err)
		}
	}
	lo.Program = Program(prog)
	lo.Entrypoint = o.Launcher
	lo.Image = image
	if (format == "k8s" || format == "pytorchjob") && (lo.Image == "" || len(lo.Hosts) > 0 || lo.MasterAddr != "") {
		return exitcode.Usagef("--format %s needs --image, and the operator names the pods: drop --hosts and --master-addr", format)
	}
	if nodes, _ := t.Nodes(); format == "sh" && len(lo.Hosts) == 0 && nodes > 1 {
		return exitcode.Usagef("--format sh: the layout has %d nodes: give their hosts with --hosts", nodes)
	}
	plan, d, err := launch.Build(t, lo)
	if err != nil {
		return exitcode.Usagef("%v", err)
	}
	if d.HasErrors() {
		if err := diag.WriteText(stderr, d); err != nil {
			return err
		}
		return exitcode.Silent(exitcode.Invalid)
	}
	if note != "" {
		plan.Notes = append(plan.Notes, note)
	}
	plan.File = planFile[format]
	if err := launch.Check(format, plan); err != nil {
		return exitcode.Usagef("%v", err)
	}
	// Files only once the plan is checked: a refused plan leaves nothing.
	path := filepath.Join(o.Dir, planFile[format])
	if err := EmitWith(o.Dir, writePlan, atomicfile.File{Path: path, Mode: launch.FileMode(format), Write: func(w io.Writer) error {
		return launch.Write(w, format, plan)
	}}); err != nil {
		return fmt.Errorf("emit: %w", err)
	}
	fmt.Fprintf(stderr, "mimoplan: wrote %s, %s and the %s plan %s to %s\n", PayloadFile, PlanFile, format, filepath.Base(path), o.Dir)
	fmt.Fprintln(stdout, path)
	return nil
}

var errTooBig = errors.New("more than a ConfigMap holds")

// cappedBuffer is a bytes.Buffer that refuses to grow past max bytes.
type cappedBuffer struct {
	bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.max {
		return 0, errTooBig
	}
	return c.Buffer.Write(p)
}
