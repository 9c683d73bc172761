package launch

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/megatron"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// BridgeEnv is the MIMO_* environment of t's modules, in layout order.
func BridgeEnv(t *topo.Topology) []EnvVar {
	var env []EnvVar
	for _, m := range t.Modules {
		name := megatron.BridgeEnvPrefix + megatron.BridgeEnvName(m.Name) + "_"
		for i, v := range []int{m.TP, m.PP, m.DP, m.RankOffset} {
			env = append(env, EnvVar{name + megatron.BridgeSuffixes[i], strconv.Itoa(v)})
		}
	}
	return env
}

// bridgeUnread lists what the llava examples' MIMO_* variables cannot
// carry: their grids have no cp, ep or expt_tp, and the examples read
// only LLM, VISION and AUDIO.
func bridgeUnread(t *topo.Topology) []string {
	var out []string
	for _, m := range t.Modules {
		if m.CP != 1 || m.EP != 1 || m.ExptTP != 1 {
			out = append(out, fmt.Sprintf("%s's cp %d, ep %d, expt_tp %d", m.Name, m.CP, m.EP, m.ExptTP))
		}
		if p := megatron.BridgeEnvName(m.Name); !slices.Contains(megatron.BridgeRead, p) {
			out = append(out, fmt.Sprintf("module %s (MIMO_%s_*, which the llava examples do not read)", m.Name, p))
		}
	}
	return out
}

// WriteBridge writes the Python that builds the layout's
// MegatronMIMOParallelismConfig (Megatron-Bridge
// src/megatron/bridge/models/megatron_mimo/megatron_mimo_config.py) and
// finalizes it, with the MIMO_* environment of Bridge's llava example.
func WriteBridge(w io.Writer, p *Plan) error {
	if err := Check("bridge", p); err != nil {
		return err
	}
	t := p.topo
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# Megatron-Bridge parallelism of %s, written by mimoplan launch-plan --format bridge.\n", comment(cmp.Or(p.Name, "(unnamed layout)")))
	fmt.Fprintln(bw, "# Megatron-Bridge's examples/megatron_mimo/llava read the same grids from these variables:")
	env := BridgeEnv(t)
	for i := 0; i < len(env); i += len(megatron.BridgeSuffixes) {
		var kv []string
		for _, e := range env[i : i+len(megatron.BridgeSuffixes)] {
			kv = append(kv, e.Name+"="+e.Value)
		}
		fmt.Fprintf(bw, "#   export %s\n", strings.Join(kv, " "))
	}
	if un := bridgeUnread(t); len(un) > 0 {
		for _, l := range wrap("note: the variables cannot carry "+strings.Join(un, "; ")+": use the config below", 76) {
			fmt.Fprintf(bw, "# %s\n", l)
		}
	}
	fmt.Fprintf(bw, `from megatron.bridge.models.megatron_mimo.megatron_mimo_config import (
    MegatronMIMOParallelismConfig,
    ModuleParallelismConfig,
)

WORLD_SIZE = %d

MIMO_ENV = {
`, t.WorldSize)
	for _, e := range env {
		fmt.Fprintf(bw, "    %q: %q,\n", e.Name, e.Value)
	}
	fmt.Fprint(bw, `}


def parallelism_config() -> MegatronMIMOParallelismConfig:
    """The layout's modules, one ModuleParallelismConfig each."""
    return MegatronMIMOParallelismConfig(
        module_parallelisms={
`)
	// Before Bridge PR #4485 ModuleParallelismConfig had no
	// expert_model_parallel_size (validate then wants ep and expt_tp 1).
	expert := p.Version.Has(upstream.PRBridgeExpert)
	for _, m := range t.Modules {
		fmt.Fprintf(bw, `            %q: ModuleParallelismConfig(
                tensor_model_parallel_size=%d,
                pipeline_model_parallel_size=%d,
                context_parallel_size=%d,
`, m.Name, m.TP, m.PP, m.CP)
		if expert {
			fmt.Fprintf(bw, "                expert_model_parallel_size=%d,\n", m.EP)
		}
		fmt.Fprintf(bw, `                expert_tensor_parallel_size=%d,
                data_parallel_size=%d,
                rank_offset=%d,
            ),
`, m.ExptTP, m.DP, m.RankOffset)
	}
	fmt.Fprint(bw, `        },
    )
`)
	writeBridgeSplits(bw, t.Layout)
	writeBridgeFreeze(bw, t.Layout)
	writeBridgeTraining(bw, t)
	fmt.Fprint(bw, `

if __name__ == "__main__":
    config = parallelism_config()
    config.finalize(WORLD_SIZE)
    print(config)
`)
	return bw.Flush()
}
