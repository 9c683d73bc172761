package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// toyEstimator stands in for the model in the brute-force tests: a
// memory figure that depends on every size, so that memory prunes some
// factorizations and not others. free: no MoE layers, so the expert sizes
// change nothing it reports (Estimator.ExpertFree).
type toyEstimator struct {
	weights float64
	free    bool
}

func (e toyEstimator) Shape(_ *layout.Layout, m *layout.Module) steptime.Shape {
	s := steptime.Shape{FLOPsPerSample: 1e12 * float64(len(m.Name)), Layers: 8, Hidden: 1024, Seq: 512, KVDim: 256, TopK: 2, MoELayers: 8}
	if e.free {
		s.MoELayers = 0
	}
	return s
}

func (e toyEstimator) Memory(_ *layout.Layout, _ *layout.Module, c *Choice) (float64, float64, bool) {
	if e.weights == 0 {
		return 0, 0, false
	}
	p := e.weights / float64(c.TP*c.GTPRemat*c.PP*c.EP)
	return p + 1e9/float64(c.CP), p, true
}

func (toyEstimator) Accepts(*layout.Layout, *layout.Module, *Choice) bool { return true }

func (e toyEstimator) ExpertFree(*layout.Layout, *layout.Module) bool { return e.free }

// bruteCase is a spec and the raw values the brute force tries for each
// open field of every module.
type bruteCase struct {
	name string
	spec string
	// open lists the module fields the spec leaves open; each takes every
	// value 1..world_size (rank_offset 0..world_size-1).
	open []string
	gtp  bool
	mem  float64 // GPU memory of the toy estimator, 0: unchecked
	est  toyEstimator
	// model: the spec's modules have real models; the real estimator
	// prunes, and validate alone (gpu-memory-short) decides memory.
	model bool
	// slow: over a second of CPU; go test -short leaves it to make test.
	slow bool
}

const (
	smallLM  = "{num_layers: 4, hidden_size: 256, num_attention_heads: 4, num_query_groups: 2, seq_length: 256, vocab_size: 1000}"
	smallMoE = "{num_layers: 2, hidden_size: 256, num_attention_heads: 4, seq_length: 128, vocab_size: 1000, num_experts: 4, moe_router_topk: 2}"
	smallLM8 = "{num_layers: 8, hidden_size: 256, num_attention_heads: 4, num_query_groups: 2, seq_length: 256, vocab_size: 1000}"
	smallViT = "{num_layers: 2, hidden_size: 128, num_attention_heads: 2, seq_length: 64}"
	// wideViT has the weights (1 GPU cannot hold them) and few FLOPs
	// (seq_length 4), longLM the FLOPs and few weights: the encoder is the
	// module over memory, on the sizes the language module's FLOPs leave it.
	wideViT = "{num_layers: 6, hidden_size: 1536, num_attention_heads: 12, seq_length: 4}"
	longLM  = "{num_layers: 4, hidden_size: 256, num_attention_heads: 4, num_query_groups: 2, seq_length: 2048, vocab_size: 1000}"
)

// weightyEncoder is a spec of wideViT beside longLM on 4 GPUs, not
// colocated, of gpu_memory mem.
func weightyEncoder(mem string) string {
	return "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu_memory: " + mem + "}\ncolocated: false\nbatch: {micro_batch_size: 1, global_batch_size: 12}\nmodules:\n" +
		"  - {name: vision, cp: 1, vpp: 1, ep: 1, expt_tp: 1, model: " + wideViT + "}\n  - {name: language, tp: 1, cp: 1, pp: 1, vpp: 1, ep: 1, expt_tp: 1, model: " + longLM + "}\n"
}

var bruteCases = []bruteCase{
	{name: "model, 8 GPUs, tp cp pp vpp open, memory", slow: true, open: []string{"tp", "cp", "pp", "vpp"}, model: true,
		spec: "version: 1\ncluster: {nodes: 2, gpus_per_node: 4, gpu_memory: 3300MiB}\nbatch: {micro_batch_size: 1, global_batch_size: 16}\nmodules:\n" +
			"  - {name: language, ep: 1, expt_tp: 1, model: " + smallLM + "}\n"},
	// Target core runs a virtual pipeline through the interleaved
	// schedule: 6 micro-batches suit pp 2 at dp 1 only (pp 4 leaves 2 over,
	// dp 2 gives 3), which interleaved-microbatches-not-divisible decides.
	{name: "model, 4 GPUs, tp pp vpp open, interleaved micro-batches", open: []string{"tp", "pp", "vpp"}, model: true,
		spec: "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu_memory: 80GiB}\nbatch: {micro_batch_size: 1, global_batch_size: 6}\nmodules:\n" +
			"  - {name: language, cp: 1, ep: 1, expt_tp: 1, model: " + smallLM8 + "}\n"},
	// An encoder with a virtual pipeline: interleaved-microbatches-not-
	// divisible reads its pp and vpp and the language module's lanes (12
	// micro-batches over language dp 2 are 6, over dp 4 are 3: vision's pp
	// 2 interleaves beside the first, not the second; pp 4 beside neither),
	// which the search learns beside those lanes (lanesNogood).
	{name: "models, 6 GPUs, an encoder's tp pp vpp open, interleaved micro-batches", open: []string{"tp", "pp", "vpp"}, model: true, slow: true,
		spec: "version: 1\ncluster: {nodes: 3, gpus_per_node: 2, gpu_memory: 80GiB}\nbatch: {micro_batch_size: 1, global_batch_size: 12}\nmodules:\n" +
			"  - {name: vision, cp: 1, ep: 1, expt_tp: 1, model: " + smallLM8 + "}\n  - {name: language, cp: 1, ep: 1, expt_tp: 1, tp: 1, pp: 1, vpp: 1, model: " + smallLM + "}\n"},
	// The MIMO runtimes build one model chunk and run the non-interleaved
	// schedule: mimo-vpp-unsupported refuses every vpp above 1 at pp above
	// 1, whatever the batch.
	{name: "megatron-lm, model, 4 GPUs, tp pp vpp open", open: []string{"tp", "pp", "vpp"}, model: true,
		spec: "version: 1\ntarget: megatron-lm\ncluster: {nodes: 1, gpus_per_node: 4, gpu_memory: 80GiB}\nbatch: {micro_batch_size: 1, global_batch_size: 8}\n" +
			"training: {use_distributed_optimizer: true}\nmodules:\n  - {name: language, cp: 1, ep: 1, expt_tp: 1, model: " + smallLM8 + "}\n"},
	{name: "models, MoE, 4 GPUs, memory", open: []string{"tp", "ep"}, model: true,
		spec: "version: 1\ntarget: megatron-bridge\ncluster: {nodes: 1, gpus_per_node: 4, gpu_memory: 5000MiB}\nbatch: {micro_batch_size: 4, global_batch_size: 8}\n" +
			"training: {use_distributed_optimizer: true}\nmodules:\n" +
			"  - {name: vision, cp: 1, pp: 1, expt_tp: 1, model: " + smallViT + "}\n  - {name: language, cp: 1, pp: 1, expt_tp: 1, model: " + smallMoE + "}\n"},
	// The descent meets the encoder on 1 GPU, every factorization over
	// memory, before anything fits; the language module on 1 GPU beside
	// the encoder on 3 fits (pp 3 or tp 3), so its size 1 is not spent.
	{name: "models, 4 GPUs, tp pp open, the encoder over memory", open: []string{"tp", "pp"}, model: true, spec: weightyEncoder("5500MiB")},
	// The encoder has three times the language module's FLOPs: the first
	// pass refuses it on 1 and 2 GPUs, by compute alone, and takes the
	// language module on 1 GPU beside it on 3 (the sizes the pass steps over
	// are the language module's alone).
	{name: "models, 4 GPUs, tp pp open, the encoder with the FLOPs", open: []string{"tp", "pp"}, model: true,
		spec: "version: 1\ncluster: {nodes: 1, gpus_per_node: 4, gpu_memory: 80GiB}\ncolocated: false\nbatch: {micro_batch_size: 1, global_batch_size: 12}\nmodules:\n" +
			"  - {name: vision, cp: 1, vpp: 1, ep: 1, expt_tp: 1, model: {num_layers: 12, hidden_size: 256, num_attention_heads: 4, seq_length: 256}}\n" +
			"  - {name: language, tp: 1, cp: 1, pp: 1, vpp: 1, ep: 1, expt_tp: 1, model: " + smallLM + "}\n"},
	{name: "one module, 6 GPUs, everything open", slow: true, open: []string{"tp", "cp", "pp", "ep", "expt_tp"},
		spec: "version: 1\nworld_size: 6\nmodules:\n  - name: language\n    num_experts: 6\n"},
	{name: "two modules, 4 GPUs, tp and pp open", open: []string{"tp", "pp"},
		spec: "version: 1\ncluster: {nodes: 2, gpus_per_node: 2}\nbatch: {micro_batch_size: 1, global_batch_size: 8}\nmodules:\n" +
			"  - {name: vision, cp: 1, ep: 1, expt_tp: 1}\n  - {name: language, cp: 1, ep: 1, expt_tp: 1}\n"},
	{name: "bridge, 8 GPUs, tp open, memory", slow: true, open: []string{"tp"}, mem: 9e9, est: toyEstimator{weights: 16e9},
		spec: "version: 1\ntarget: megatron-bridge\ncluster: {nodes: 2, gpus_per_node: 4}\nbatch: {micro_batch_size: 4, global_batch_size: 16}\nmodules:\n" +
			"  - {name: vision, cp: 1, pp: 1, ep: 1, expt_tp: 1}\n  - {name: language, cp: 1, pp: 1, ep: 1, expt_tp: 1}\n"},
	{name: "megatron-lm, 4 GPUs, tp and cp open", open: []string{"tp", "cp"},
		spec: "version: 1\ntarget: megatron-lm\nworld_size: 4\nbatch: {micro_batch_size: 2}\ntraining: {use_distributed_optimizer: true}\nmodules:\n" +
			"  - {name: vision, pp: 1, ep: 1, expt_tp: 1}\n  - {name: language, pp: 1, ep: 1, expt_tp: 1}\n"},
	{name: "three modules, 4 GPUs, tp open", slow: true, open: []string{"tp"},
		spec: "version: 1\nworld_size: 4\nmodules:\n  - {name: vision, cp: 1, pp: 1, ep: 1, expt_tp: 1}\n" +
			"  - {name: audio, cp: 1, pp: 1, ep: 1, expt_tp: 1}\n  - {name: language, cp: 1, pp: 1, ep: 1, expt_tp: 1}\n"},
	{name: "constraints: colocated, max_tp, fixed tp", open: []string{"tp", "pp"},
		spec: "version: 1\ncluster: {nodes: 1, gpus_per_node: 8}\ncolocated: true\nmodules:\n" +
			"  - {name: vision, max_tp: 2, cp: 1, ep: 1, expt_tp: 1}\n  - {name: language, tp: 4, cp: 1, ep: 1, expt_tp: 1}\n"},
	{name: "constraints: non-colocated, align node, num_ranks", open: []string{"tp", "pp"},
		spec: "version: 1\ncluster: {nodes: 3, gpus_per_node: 2}\ncolocated: false\nmodules:\n" +
			"  - {name: vision, align: node, cp: 1, ep: 1, expt_tp: 1}\n  - {name: language, num_ranks: 4, cp: 1, ep: 1, expt_tp: 1}\n"},
	{name: "models, dense, expt_tp open, 4 GPUs", open: []string{"tp", "expt_tp"}, model: true,
		spec: "version: 1\ncluster: {nodes: 2, gpus_per_node: 2, gpu_memory: 80GiB}\nbatch: {micro_batch_size: 1, global_batch_size: 8}\nmodules:\n" +
			"  - {name: vision, cp: 1, pp: 1, ep: 1, model: " + smallViT + "}\n  - {name: language, cp: 1, pp: 1, ep: 1, model: " + smallLM + "}\n"},
	{name: "bridge, models, dense, expt_tp open, 4 GPUs", open: []string{"tp", "expt_tp"}, model: true,
		spec: "version: 1\ntarget: megatron-bridge\ncluster: {nodes: 1, gpus_per_node: 4, gpu_memory: 80GiB}\nbatch: {micro_batch_size: 4, global_batch_size: 8}\nmodules:\n" +
			"  - {name: vision, cp: 1, pp: 1, ep: 1, model: " + smallViT + "}\n  - {name: language, cp: 1, pp: 1, ep: 1, model: " + smallLM + "}\n"},
	{name: "expert-free toy, expt_tp and expt_gtp_remat open, 4 GPUs", open: []string{"tp", "expt_tp", "expt_gtp_remat"}, gtp: true,
		mem: 9e9, est: toyEstimator{weights: 16e9, free: true},
		spec: "version: 1\ncluster: {nodes: 2, gpus_per_node: 2}\nmodules:\n  - {name: language, cp: 1, pp: 1, ep: 1, gtp_remat: 1}\n"},
	{name: "gtp asked, 4 GPUs", open: []string{"tp", "gtp_remat", "expt_gtp_remat"}, gtp: true,
		spec: "version: 1\nworld_size: 4\nmodules:\n  - {name: language, cp: 1, pp: 1, ep: 1, expt_tp: 1}\n"},
}

// TestSuggestAllEqualsBruteForce compares the planner's whole kept set
// with validate run on every raw combination of the open fields: every
// span ([offset, offset+num_ranks) for any offset and size) and every
// value 1..world_size of each open size, kept when validate finds no
// error, the constraints hold and memory fits.
func TestSuggestAllEqualsBruteForce(t *testing.T) {
	for _, tc := range bruteCases {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.slow {
				t.Skip("over a second of CPU: make test runs it")
			}
			spec, d := layout.ParseSpec("spec.yaml", []byte(tc.spec))
			require.Empty(t, d.Items, "spec")
			want := bruteForce(t, spec, tc)
			req := &Request{Spec: spec, Options: Options{GTP: tc.gtp}, Est: tc.est, HW: steptime.GPUs["H100"], GPUMemory: tc.mem}
			if tc.model {
				req.Est, req.GPUMemory = Model{}, float64(spec.GPUMemory)
			}
			res, err := Search(req)
			require.NoError(t, err)
			var got []string
			for _, c := range res.Candidates {
				got = append(got, key(c.Modules))
			}
			slices.Sort(got)
			require.NotEmpty(t, want, "a case must keep something")
			require.Equal(t, want, got)
		})
	}
}

func bruteForce(t *testing.T, spec *layout.Layout, tc bruteCase) []string {
	w := spec.WorldSize
	// Every raw module: span and sizes.
	var perModule [][]Choice
	for i := range spec.Modules {
		m := &spec.Modules[i]
		var raw []Choice
		for off := 0; off < w; off++ {
			for n := 1; n <= w; n++ {
				base := Choice{Name: m.Name, RankOffset: off, NumRanks: n, Sizes: Sizes{TP: m.TP, GTPRemat: m.GTPRemat, CP: m.CP, PP: m.PP, VPP: max(m.VPP, 1), EP: m.EP, ExptTP: m.ExptTP, ExptGTPRemat: m.ExptGTPRemat}}
				raw = append(raw, expand(base, tc.open, m, w)...)
			}
		}
		perModule = append(perModule, raw)
	}
	var kept []string
	cur := make([]Choice, len(perModule))
	var walk func(i int)
	walk = func(i int) {
		if i == len(perModule) {
			if ok := rawValid(t, spec, cur, tc); ok {
				kept = append(kept, key(cur))
			}
			return
		}
		for _, c := range perModule[i] {
			cur[i] = c
			walk(i + 1)
		}
	}
	walk(0)
	slices.Sort(kept)
	return kept
}

// expand sets each open field to every value 1..w.
func expand(c Choice, open []string, m *layout.Module, w int) []Choice {
	out := []Choice{c}
	for _, f := range open {
		if m.Given(f) {
			continue
		}
		var next []Choice
		for _, x := range out {
			for v := 1; v <= w; v++ {
				y := x
				*map[string]*int{"vpp": &y.VPP, "tp": &y.TP, "gtp_remat": &y.GTPRemat, "cp": &y.CP, "pp": &y.PP, "ep": &y.EP, "expt_tp": &y.ExptTP, "expt_gtp_remat": &y.ExptGTPRemat}[f] = v
				next = append(next, y)
			}
		}
		out = next
	}
	return out
}

// rawValid: the constraints as docs/suggest.md defines them, then
// validate, then memory.
func rawValid(t *testing.T, spec *layout.Layout, cs []Choice, tc bruteCase) bool {
	colocated := true
	for i, c := range cs {
		m := &spec.Modules[i]
		if c.RankOffset != cs[0].RankOffset || c.NumRanks != cs[0].NumRanks {
			colocated = false
		}
		if m.MaxTP > 0 && c.TP > m.MaxTP || m.Given("num_ranks") && c.NumRanks != m.NumRanks {
			return false
		}
		if g := spec.Cluster; m.AlignNode && (c.RankOffset%g.GPUsPerNode != 0 || c.NumRanks%g.GPUsPerNode != 0) {
			return false
		}
	}
	if spec.Colocated != nil && len(cs) > 1 && *spec.Colocated != colocated {
		return false
	}
	l := *spec
	l.Modules = slices.Clone(spec.Modules)
	for i, c := range cs {
		m := &l.Modules[i]
		m.RankOffset, m.NumRanks = c.RankOffset, c.NumRanks
		m.TP, m.GTPRemat, m.CP, m.PP, m.EP, m.ExptTP, m.ExptGTPRemat = c.TP, c.GTPRemat, c.CP, c.PP, c.EP, c.ExptTP, c.ExptGTPRemat
		m.VPP = c.VPP
	}
	res := validate.Check(&l, &diag.List{File: "raw"})
	if e, _ := res.Diags.Count(); e > 0 {
		return false
	}
	if tc.model {
		return true
	}
	for i := range cs {
		c := cs[i]
		c.DP = c.NumRanks / (c.TP * c.GTPRemat * c.CP * c.PP)
		if b, _, ok := tc.est.Memory(spec, &spec.Modules[i], &c); tc.mem > 0 && ok && b > tc.mem {
			return false
		}
	}
	return true
}

func key(cs []Choice) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s@%d+%d:tp%d,g%d,cp%d,pp%d,v%d,ep%d,etp%d,eg%d", c.Name, c.RankOffset, c.NumRanks, c.TP, c.GTPRemat, c.CP, c.PP, c.VPP, c.EP, c.ExptTP, c.ExptGTPRemat))
	}
	return strings.Join(parts, " ")
}
