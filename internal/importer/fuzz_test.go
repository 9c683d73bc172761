package importer

import (
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// FuzzMegatronLM: whatever the argv, import never panics; what it writes
// is layout text the parser reads without syntax or unknown-key errors;
// and a valid imported layout that launch-plan can launch imports back to
// the same layout from its plan.
func FuzzMegatronLM(f *testing.F) {
	for _, s := range []string{
		"torchrun --nnodes=1 --nproc-per-node=8 p.py --mimo-encoder-tp 2 --mimo-encoder-dp 2 --mimo-llm-offset 4 --mimo-llm-tp 2 --micro-batch-size 4",
		"--llm-only --llm-offset 0 --llm-tp 4 --llm-dp 2 --num-experts 8 --llm-ep 2 --micro-batch-size=1",
		"--llm-tp 2 --tensor-parallel-num-weight-shards 4 --expert-tensor-parallel-num-weight-shards 2 --micro-batch-size 2",
		"--encoder-tp=0", "--llm-dp 99999999999999999999", "--mimo-llm-tp", "-- --llm-tp 2 3",
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
		ly, d := layout.Parse("f.yaml", []byte(text))
		for _, x := range d.Items {
			if x.Rule == "yaml-syntax" || x.Rule == "unknown-field" {
				t.Fatalf("import wrote unreadable layout text (%s: %s):\n%s", x.Rule, x.Message, text)
			}
		}
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
