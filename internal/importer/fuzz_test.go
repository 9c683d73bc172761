package importer

import (
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// FuzzMegatronLM: whatever the argv, import never panics; it never accepts
// what the layout parser refuses (a size past MaxWorldSize, a product
// wrapped past 2^64: the text it writes parses without an error); and a
// valid imported layout that launch-plan can launch imports back to the
// same layout from its plan.
func FuzzMegatronLM(f *testing.F) {
	for _, s := range []string{
		"torchrun --nnodes=1 --nproc-per-node=8 p.py --mimo-encoder-tp 2 --mimo-encoder-dp 2 --mimo-llm-offset 4 --mimo-llm-tp 2 --micro-batch-size 4",
		"--llm-only --llm-offset 0 --llm-tp 4 --llm-dp 2 --num-experts 8 --llm-ep 2 --micro-batch-size=1",
		"--llm-tp 2 --tensor-parallel-num-weight-shards 4 --expert-tensor-parallel-num-weight-shards 2 --micro-batch-size 2",
		"--encoder-tp=0", "--llm-dp 99999999999999999999", "--mimo-llm-tp", "-- --llm-tp 2 3",
		"--mimo-encoder-dp 4611686018427387905 --mimo-encoder-tp 4 --mimo-llm-tp 2",
		"--mimo-llm-tp 4294967296 --mimo-llm-dp 4294967296", "--nnodes 4294967296 --nproc-per-node 4294967296 p.py",
		"--mimo-llm-offset 9223372036854775807",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := MegatronLM(strings.Fields(s), "vision")
		if err != nil {
			return
		}
		text, err := l.YAML()
		if err != nil {
			t.Fatal(err)
		}
		ly, d := parsed(t, "import megatron-lm "+s, text)
		res := validate.Check(ly, d)
		if !res.Valid(false) {
			return
		}
		p, _, err := launch.Build(res.Topology, launch.Options{LayoutArgs: true, MasterPort: launch.DefaultMasterPort, Hosts: hostsFor(res)})
		if err != nil || p == nil {
			return
		}
		// torchrun's flags carry the cluster; without one, the program's.
		argv := p.Program
		if l.Nodes > 0 {
			argv = p.Node(0).Command
		}
		again, err := MegatronLM(argv, "vision")
		if err != nil {
			t.Fatalf("the plan of an imported layout does not import: %v\n%s", err, text)
		}
		if got, err := again.YAML(); err != nil || got != text {
			t.Fatalf("round trip changed the layout:\n%s\nthen\n%s (%v)", text, got, err)
		}
	})
}

// parsed parses an imported layout's text: the parser must refuse none of
// it, since import must refuse first what the layout cannot hold.
func parsed(t *testing.T, what, text string) (*layout.Layout, *diag.List) {
	t.Helper()
	ly, d := layout.Parse("f.yaml", []byte(text))
	for _, x := range d.Items {
		if x.Severity == diag.Error {
			t.Fatalf("%s accepted what the layout parser refuses (%s: %s):\n%s", what, x.Rule, x.Message, text)
		}
	}
	return ly, d
}

// FuzzBridgeEnv: whatever the MIMO_* values, import bridge-env never
// panics and never accepts what the layout parser refuses.
func FuzzBridgeEnv(f *testing.F) {
	f.Add("4", "1", "1", "0", "1", "1", "4", "4")
	f.Add("4611686018427387905", "4", "1", "0", "1", "1", "4", "4")
	f.Add("1", "1", "1", "9223372036854775807", "4294967296", "4294967296", "1", "0")
	f.Add(" 2", "1 ", "0", "-1", "x", "1", "1", "1")
	f.Fuzz(func(t *testing.T, vtp, vpp, vdp, voff, ltp, lpp, ldp, loff string) {
		env := map[string]string{
			"MIMO_VISION_TP": vtp, "MIMO_VISION_PP": vpp, "MIMO_VISION_DP": vdp, "MIMO_VISION_OFFSET": voff,
			"MIMO_LANGUAGE_TP": ltp, "MIMO_LANGUAGE_PP": lpp, "MIMO_LANGUAGE_DP": ldp, "MIMO_LANGUAGE_OFFSET": loff,
		}
		l, err := BridgeEnv(env)
		if err != nil {
			return
		}
		text, err := l.YAML()
		if err != nil {
			t.Fatal(err)
		}
		parsed(t, "import bridge-env", text)
	})
}
