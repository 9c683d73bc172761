package validate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// p2pCase is one case of testdata/p2p-overlap-megatron.json.
type p2pCase struct {
	PP              int            `json:"pp"`
	VPP             int            `json:"vpp"`
	VirtualPipeline string         `json:"virtual_pipeline"` // "vpp" or "layout"
	Overlap         bool           `json:"overlap_p2p_comm"`
	Outcome         string         `json:"outcome"`
	Where           string         `json:"where"`
	Result          map[string]any `json:"result"`
}

// TestP2POverlapMatchesMegatron: scripts/gen-p2p-overlap-fixtures.py ran
// Megatron-LM's MIMO example's argument validation (_parse_and_validate,
// a language-only launch of pp ranks) over pp 1-4, vpp 1-3 and
// pipeline_model_parallel_layouts, with and without
// --no-overlap-p2p-communication. On target megatron-lm,
// vpp-needs-pp-without-p2p-overlap reports exactly the cases upstream
// refuses at arguments.py:1006 (vpp-needs-pp those at :1002, and at pp 1
// both), each rule citing its line, and the overlap the layout runs with
// (Layout.OverlapP2PComm) is the one validate_args leaves.
func TestP2POverlapMatchesMegatron(t *testing.T) {
	var f struct {
		NumLayers int                `json:"num_layers"`
		Stubbed   []string           `json:"stubbed"`
		Cases     map[string]p2pCase `json:"cases"`
	}
	testutil.LoadMegatron(t, "testdata/p2p-overlap-megatron.json", &f)
	require.Subset(t, []string{"torch", "numpy", "packaging", "triton", "typing_extensions"}, f.Stubbed)
	require.Len(t, f.Cases, 30)
	cites := func(id diag.RuleID, where string) bool {
		rule, ok := diag.Lookup(string(id))
		require.True(t, ok)
		return citesLine(rule.Source, where)
	}
	raised := map[string]int{}
	for name, c := range f.Cases {
		t.Run(name, func(t *testing.T) {
			split := fmt.Sprintf("  vpp: %d\n", c.VPP)
			if c.VirtualPipeline == "layout" {
				split = fmt.Sprintf("  pipeline_model_parallel_layout: %q\n", stagesLayout(f.NumLayers, c.PP*c.VPP))
			}
			src := fmt.Sprintf("version: 1\ntarget: megatron-lm\nworld_size: %d\nbatch: {micro_batch_size: 1, global_batch_size: 8}\n"+
				"training: {use_distributed_optimizer: true, overlap_p2p_comm: %t}\nmodules:\n- name: language\n  num_ranks: %d\n  pp: %d\n%s"+
				"  model: {num_layers: %d, hidden_size: 64, num_attention_heads: 4, seq_length: 64, vocab_size: 128}\n",
				c.PP, c.Overlap, c.PP, c.PP, split, f.NumLayers)
			l, d := layout.Parse("lm.yaml", []byte(src))
			r := Check(l, d)
			var got []diag.RuleID
			for _, it := range r.Diags.Items {
				id := diag.RuleID(it.Rule)
				if id == diag.RuleVPPNeedsPP || id == diag.RuleVPPNeedsPPWithoutP2POverlap {
					got = append(got, id)
					if id == diag.RuleVPPNeedsPPWithoutP2POverlap {
						pos := l.Pos("training.overlap_p2p_comm")
						assert.Equal(t, [2]int{pos.Line, pos.Column}, [2]int{it.Line, it.Column}, "at the key")
						assert.Equal(t, "language", it.Module)
					}
				}
			}
			slices.Sort(got)
			var want []diag.RuleID
			switch c.Outcome {
			case "ok":
				assert.Equal(t, c.Result["overlap_p2p_comm"], l.OverlapP2PComm(&l.Modules[0], c.PP), "the overlap validate_args leaves")
			case "raises":
				raised[c.Where]++
				switch {
				case cites(diag.RuleVPPNeedsPP, c.Where):
					want = []diag.RuleID{diag.RuleVPPNeedsPP}
				case cites(diag.RuleVPPNeedsPPWithoutP2POverlap, c.Where):
					want = []diag.RuleID{diag.RuleVPPNeedsPPWithoutP2POverlap}
					if c.PP == 1 {
						want = []diag.RuleID{diag.RuleVPPNeedsPP, diag.RuleVPPNeedsPPWithoutP2POverlap}
					}
				default:
					t.Fatalf("upstream raises at %s, which neither rule cites", c.Where)
				}
			default:
				t.Fatalf("outcome %s", c.Outcome)
			}
			slices.Sort(want)
			assert.Equal(t, want, got, "upstream %s at %s", c.Outcome, c.Where)
		})
	}
	// Both checks ran: the grid is not all one verdict.
	assert.Equal(t, map[string]int{"megatron/training/arguments.py:1002": 2, "megatron/training/arguments.py:1006": 5}, raised)
}

// citesLine reports whether a rule's source cites file:line (the file
// named, the line after it as :line).
func citesLine(source, where string) bool {
	file, line, _ := strings.Cut(where, ":")
	i := strings.Index(source, file)
	return i >= 0 && strings.Contains(source[i:], ":"+line)
}

// stagesLayout is scripts/gen-p2p-overlap-fixtures.py's pipeline layout of
// stages stages over layers layers.
func stagesLayout(layers, stages int) string {
	s := ""
	for i := range stages {
		part := fmt.Sprintf("t*%d", layers/stages)
		if i == 0 {
			part = "E" + part
		}
		if i == stages-1 {
			part += "L"
		}
		if i > 0 {
			s += "|"
		}
		s += part
	}
	return s
}
