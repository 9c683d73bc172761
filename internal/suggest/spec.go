package suggest

import (
	"fmt"
	"io"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// Probe reads the machine suggest --probe plans for, in place of the
// spec's cluster, with the machine's own findings (validate --probe's GPU
// rules); its error ends the command as it is (suggestcmd's: exit 3
// without NVML or without a visible GPU).
type Probe func() (*layout.Machine, []diag.Diagnostic, error)

// ReadSpec parses a spec, the bytes data of file, writing its problems to
// w: the spec's diagnostics end it with exit 1.
//
// With probe (suggest --probe), the machine it reads replaces the spec's
// world_size and cluster: w gets a line naming the node and a note for
// each value of the spec that it replaced, then the machine's own
// findings, whose errors end it with exit 1 too.
func ReadSpec(w io.Writer, file string, data []byte, probe Probe) (*layout.Layout, error) {
	var on *layout.Machine
	var found []diag.Diagnostic
	if probe != nil {
		var err error
		if on, found, err = probe(); err != nil {
			return nil, err
		}
	}
	spec, d := layout.ParseSpecOn(file, data, on)
	if on != nil {
		writeNode(w, spec)
		d.Append(found...)
		d.Sort()
	}
	if d.HasErrors() || on != nil {
		if err := diag.WriteText(w, d); err != nil {
			return nil, err
		}
	}
	if d.HasErrors() {
		return nil, exitcode.Silent(exitcode.Invalid)
	}
	return spec, nil
}

// writeNode says which node a probed spec is planned for, and what of the
// spec's own cluster that replaced.
func writeNode(w io.Writer, spec *layout.Layout) {
	m := spec.Machine
	fmt.Fprintf(w, "mimoplan: planning for this node (NVML): %s; cluster: {nodes: %d, gpus_per_node: %d, gpu_memory: %s}\n",
		m.About, m.Cluster.Nodes, m.Cluster.GPUsPerNode, m.GPUMemoryText())
	for _, r := range spec.Replaced {
		fmt.Fprintf(w, "%s:%d:%d: note: this node's %s %s replaces the spec's %s\n", spec.File, r.Pos.Line, r.Pos.Column, r.Key, r.Machine, r.Spec)
	}
}
