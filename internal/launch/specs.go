package launch

import (
	"bufio"
	"cmp"
	"fmt"
	"io"

	"github.com/mimoplan/mimoplan/internal/upstream"
)

// specsPython turns the topology into Megatron-LM ModuleGridSpecs
// (examples/mimo/training/topology.py), the input of create_topology. %s
// is the layout's name, the topology JSON, the GTP arguments.
const specsPython = `# ModuleGridSpecs of %s, written by mimoplan launch-plan --format megatron-specs.
# Import it from a Megatron-LM checkout (examples/mimo/training/topology.py):
#   specs = module_grid_specs(); topology = create_topology(specs, ...)
# MIMOPLAN_TOPOLOGY, when set, names a topology file that replaces the one below.
import json
import os

from examples.mimo.training.topology import ModuleGridSpec

TOPOLOGY = r"""
%s"""


def module_grid_specs(topology=None):
    """The layout's modules as ModuleGridSpecs, in layout order."""
    if topology is None:
        path = os.environ.get("MIMOPLAN_TOPOLOGY")
        topology = json.load(open(path)) if path else json.loads(TOPOLOGY)
    specs = []
    for m in topology["modules"]:
        spec = ModuleGridSpec(
            name=m["name"], num_ranks=m["num_ranks"], rank_offset=m["rank_offset"],
            tp=m["tp"], cp=m["cp"], pp=m["pp"], ep=m["ep"], expt_tp=m["expt_tp"],%s
        )
        # ModuleGridSpec derives dp and expt_dp; they must be the layout's.
        if (spec.dp, spec.expt_dp) != (m["dp"], m["expt_dp"]):
            raise ValueError(f"{m['name']}: ModuleGridSpec derives dp {spec.dp}, expt_dp {spec.expt_dp}, the layout has {m['dp']}, {m['expt_dp']}")
        specs.append(spec)
    return specs


if __name__ == "__main__":
    for spec in module_grid_specs():
        print(spec)
`

// WriteMegatronSpecs writes the Python that builds the layout's
// ModuleGridSpecs: the ~20 lines docs/launch.md shows, with the topology
// in it.
func WriteMegatronSpecs(w io.Writer, p *Plan) error {
	gtp := ""
	// ModuleGridSpec has GTP sizes since Megatron-LM PR #6570.
	if p.Version.Has(upstream.PRGTP) {
		gtp = `
            gtp_remat=m["gtp_remat"], expt_gtp_remat=m["expt_gtp_remat"],`
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, specsPython, comment(cmp.Or(p.Name, "(unnamed layout)")), p.Topology, gtp)
	return bw.Flush()
}
