package plan

import (
	"fmt"
	"io"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// ReadSpec parses a spec, the bytes data of file, writing its problems to
// w: the spec's diagnostics end it with exit 1.
//
// With probe (suggest --probe), this machine as gpuprobe.NodeEnv reads it
// replaces the spec's world_size and cluster: w gets a line naming the
// node and a note for each value of the spec that it replaced, then the
// machine's own findings (validate --probe's GPU rules), whose errors end
// it with exit 1 too. Without NVML, or with no GPU visible, it ends with
// exit 3, as the other --probe commands do.
func ReadSpec(w io.Writer, file string, data []byte, probe func() (*gpuprobe.Snapshot, error)) (*layout.Layout, error) {
	var on *layout.Machine
	var found []diag.Diagnostic
	if probe != nil {
		s, err := probe()
		if err == nil {
			on, found, err = gpuprobe.NodeEnv(s)
		}
		if err != nil {
			return nil, exitcode.Wrap(exitcode.NoGPU, err)
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
