package validate_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// randLayout is a layout the property test writes as text: two or three
// modules with small models (or none), every size open to change.
type randLayout struct {
	target            string
	nodes, gpn        int
	memory            string
	mbs, gbs          int
	sp                bool
	colocated         bool
	mods              []randModule
	distributedOptim  bool
	recomputeSelected bool
	env               string // the env block's flow mapping; "" for none
}

var randEnvs = []string{"", "", "{PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True}", "{CUDA_DEVICE_MAX_CONNECTIONS: 1}",
	"{CUDA_DEVICE_MAX_CONNECTIONS: 8, PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True}"}

type randModule struct {
	name                                string
	n, off                              int
	tp, gtp, cp, pp, vpp, ep, etp, egtp int
	experts                             int
	model                               string
}

var randModels = []string{"",
	"{num_layers: 4, hidden_size: 256, num_attention_heads: 4, num_query_groups: 2, seq_length: 256, vocab_size: 1000}",
	"{num_layers: 2, hidden_size: 128, num_attention_heads: 2, seq_length: 64}",
	"{num_layers: 4, hidden_size: 256, num_attention_heads: 4, seq_length: 128, vocab_size: 1000, num_experts: 4, moe_router_topk: 2}",
	"{num_layers: 6, hidden_size: 192, num_attention_heads: 6, seq_length: 96}",
}

func (l *randLayout) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\ntarget: %s\ncluster: {nodes: %d, gpus_per_node: %d", l.target, l.nodes, l.gpn)
	if l.memory != "" {
		fmt.Fprintf(&b, ", gpu_memory: %s", l.memory)
	}
	b.WriteString("}\n")
	if l.mbs > 0 {
		fmt.Fprintf(&b, "batch: {micro_batch_size: %d", l.mbs)
		if l.gbs > 0 {
			fmt.Fprintf(&b, ", global_batch_size: %d", l.gbs)
		}
		b.WriteString("}\n")
	}
	fmt.Fprintf(&b, "training: {sequence_parallel: %t, use_distributed_optimizer: %t", l.sp, l.distributedOptim)
	if l.recomputeSelected {
		b.WriteString(", recompute_granularity: selective")
	}
	b.WriteString("}\n")
	if l.env != "" {
		fmt.Fprintf(&b, "env: %s\n", l.env)
	}
	b.WriteString("modules:\n")
	for _, m := range l.mods {
		fmt.Fprintf(&b, "  - {name: %s, num_ranks: %d, rank_offset: %d, tp: %d, gtp_remat: %d, cp: %d, pp: %d, vpp: %d, ep: %d, expt_tp: %d, expt_gtp_remat: %d",
			m.name, m.n, m.off, m.tp, m.gtp, m.cp, m.pp, m.vpp, m.ep, m.etp, m.egtp)
		if m.experts > 0 && m.model == "" { // a model gives its own
			fmt.Fprintf(&b, ", num_experts: %d", m.experts)
		}
		if m.model != "" {
			fmt.Fprintf(&b, ", model: %s", m.model)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// sizes draws a module's sizes, small powers of two mostly, so that many
// layouts build a topology.
func sizes(r *rand.Rand, m *randModule) {
	s := func() int { return pick(r, 1, 1, 1, 2, 2, 4) }
	m.tp, m.gtp, m.cp, m.pp, m.vpp, m.ep, m.etp, m.egtp = s(), pick(r, 1, 1, 1, 2), s(), s(), pick(r, 1, 1, 2), s(), s(), pick(r, 1, 1, 1, 2)
}

// place lays the modules on the world: all on it (colocated), or one
// after another with random shares.
func (l *randLayout) place(r *rand.Rand) {
	w := l.nodes * l.gpn
	if l.colocated {
		for i := range l.mods {
			l.mods[i].off, l.mods[i].n = 0, w
		}
		return
	}
	at := 0
	for i := range l.mods {
		left := len(l.mods) - i - 1
		n := w - at - left
		if left > 0 {
			n = pick(r, 1, 2, 4, 8)
			n = min(n, w-at-left)
		}
		l.mods[i].off, l.mods[i].n = at, n
		at += n
	}
}

func newRandLayout(r *rand.Rand) *randLayout {
	l := &randLayout{target: pick(r, "core", "megatron-lm", "megatron-bridge"), nodes: pick(r, 1, 2), gpn: pick(r, 4, 8),
		memory: pick(r, "", "", "1GiB", "3GiB"), mbs: pick(r, 0, 1, 2, 4), gbs: pick(r, 0, 8, 16, 24, 64),
		sp: r.IntN(2) == 0, colocated: r.IntN(3) == 0, distributedOptim: r.IntN(2) == 0, recomputeSelected: r.IntN(3) == 0,
		env: pick(r, randEnvs...)}
	names := [][]string{{"vision", "language"}, {"language", "vision"}, {"vision", "audio", "language"}, {"language"}}[r.IntN(4)]
	for _, name := range names {
		m := randModule{name: name, model: pick(r, randModels...)}
		if name == "language" && r.IntN(2) == 0 {
			m.experts = pick(r, 2, 4)
		}
		sizes(r, &m)
		l.mods = append(l.mods, m)
	}
	l.place(r)
	return l
}

// mutate changes one or two things of l: a module's size, num_experts or
// model, the spans, the batch, the target, the training or the env.
func (l *randLayout) mutate(r *rand.Rand) {
	for range 1 + r.IntN(2) {
		m := &l.mods[r.IntN(len(l.mods))]
		v := pick(r, 1, 2, 4)
		switch r.IntN(16) {
		case 0:
			m.tp = v
		case 1:
			m.gtp = pick(r, 1, 2)
		case 2:
			m.cp = v
		case 3:
			m.pp = v
		case 4:
			m.vpp = pick(r, 1, 2)
		case 5:
			m.ep = v
		case 6:
			m.etp = v
		case 7:
			m.egtp = pick(r, 1, 2)
		case 8:
			m.experts = pick(r, 0, 2, 4)
		case 9:
			m.model = pick(r, randModels...)
		case 10:
			l.colocated = r.IntN(3) == 0
			l.place(r)
		case 11:
			l.mbs, l.gbs = pick(r, 0, 1, 2, 4), pick(r, 0, 8, 16, 24, 64)
		case 12:
			l.target = pick(r, "core", "megatron-lm", "megatron-bridge")
		case 13:
			l.sp, l.distributedOptim = r.IntN(2) == 0, r.IntN(2) == 0
		case 14:
			l.memory = pick(r, "", "1GiB", "3GiB")
		case 15:
			l.env = pick(r, randEnvs...)
		}
	}
}

// inputs is what rule reads of a layout for module name ("" for a
// diagnostic that names none), by diag.Reads, as one comparable string.
func inputs(res *validate.Result, rule diag.RuleID, name string) string {
	l, t := res.Layout, res.Topology
	built := map[string]*grid.Module{}
	for _, m := range t.Modules {
		built[m.Name] = m
	}
	key := func(m *layout.Module, k string) string {
		b := built[m.Name]
		if e, ok := strings.CutPrefix(k, diag.ExpertsPrefix); ok {
			if m.Model == nil || m.Model.Config.Resolve().NumExperts == 0 {
				return "dense"
			}
			k = e
		}
		switch k {
		case "name":
			return m.Name
		case "num_ranks":
			return fmt.Sprint(m.NumRanks)
		case "rank_offset":
			return fmt.Sprint(m.RankOffset)
		case "tp":
			return fmt.Sprint(b.TP)
		case "gtp_remat":
			return fmt.Sprint(b.GTPRemat)
		case "cp":
			return fmt.Sprint(b.CP)
		case "pp":
			return fmt.Sprint(b.PP)
		case "vpp":
			return fmt.Sprint(max(m.VPP, 1))
		case "dp":
			return fmt.Sprint(b.DP)
		case "ep":
			return fmt.Sprint(b.EP)
		case "expt_tp":
			return fmt.Sprint(b.ExptTP)
		case "expt_gtp_remat":
			return fmt.Sprint(b.ExptGTPRemat)
		case "num_experts":
			return fmt.Sprint(m.NumExperts)
		case "split":
			return fmt.Sprintf("%+v", m.Split)
		case "model":
			if m.Model == nil {
				return "none"
			}
			return fmt.Sprintf("%+v", m.Model.Config)
		}
		panic("unknown module key " + k)
	}
	colocated := fmt.Sprint(t.Mode)
	var subject *layout.Module
	for i := range l.Modules {
		if l.Modules[i].Name == name {
			subject = &l.Modules[i]
		}
	}
	var out []string
	for _, in := range diag.Reads(rule, string(l.Target)) {
		switch k, lang := strings.CutPrefix(in, diag.LanguagePrefix); {
		case in == diag.Anything:
			return "anything"
		case in == diag.Placement:
			out = append(out, colocated)
		case in == "target":
			out = append(out, string(l.Target))
		case in == "target_version":
			out = append(out, fmt.Sprint(l.TargetVersion))
		case in == "world_size":
			out = append(out, fmt.Sprint(l.WorldSize))
		case in == "cluster":
			out = append(out, fmt.Sprintf("%+v %d", *l.Cluster, l.GPUMemory))
		case in == "batch":
			out = append(out, fmt.Sprintf("%+v", l.Batch))
		case in == "training":
			out = append(out, fmt.Sprintf("%+v", l.Training))
		case in == "env":
			out = append(out, fmt.Sprintf("%+v", l.Env))
		case in == "names":
			for _, m := range l.Modules {
				out = append(out, m.Name)
			}
		case lang:
			for i := range l.Modules {
				if l.Modules[i].Name == "language" {
					out = append(out, key(&l.Modules[i], k))
				}
			}
		case strings.HasPrefix(in, diag.ModulesPrefix) || strings.HasPrefix(in, diag.ColocatedPrefix) || subject == nil:
			k := in[strings.Index(in, ".")+1:]
			for i := range l.Modules {
				m := &l.Modules[i]
				if strings.HasPrefix(in, diag.ColocatedPrefix) && subject != nil && (m.RankOffset != subject.RankOffset || m.NumRanks != subject.NumRanks) {
					continue
				}
				out = append(out, key(m, k))
			}
		default:
			out = append(out, key(subject, in))
		}
	}
	return strings.Join(out, "|")
}

func fired(res *validate.Result, rule diag.RuleID, name string) bool {
	return slices.ContainsFunc(res.Diags.Items, func(d diag.Diagnostic) bool { return d.Rule == string(rule) && d.Module == name })
}

// TestRuleReadsItsDeclaredInputs: a change of a layout outside what a
// rule declares it reads (diag.Reads) never changes that rule's verdict,
// wherever the rule runs (both layouts build every module's grid). On
// random layouts of two or three modules with small models, each changed
// in one or two of its sizes, spans, models, batch, target, training or env.
func TestRuleReadsItsDeclaredInputs(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 25))
	rounds := 4000
	if testing.Short() {
		rounds = 800
	}
	compared, differed := 0, 0
	for range rounds {
		a := newRandLayout(r)
		b := *a
		b.mods = slices.Clone(a.mods)
		b.mutate(r)
		ra, rb := checkText(t, a.text()), checkText(t, b.text())
		if ra.Topology == nil || rb.Topology == nil {
			continue
		}
		for _, rule := range diag.Rules() {
			if slices.Contains(diag.Reads(rule.ID, string(ra.Layout.Target)), diag.Anything) ||
				slices.Contains(diag.Reads(rule.ID, string(rb.Layout.Target)), diag.Anything) {
				continue // it may read anything
			}
			names := []string{""}
			for _, m := range ra.Layout.Modules {
				names = append(names, m.Name)
			}
			for _, name := range names {
				if fa, fb := fired(ra, rule.ID, name), fired(rb, rule.ID, name); fa != fb {
					differed++
					if inputs(ra, rule.ID, name) == inputs(rb, rule.ID, name) {
						t.Fatalf("%s on %q changed with none of its declared inputs %v (before: %t, after: %t)\nbefore:\n%s\nafter:\n%s",
							rule.ID, name, diag.Reads(rule.ID, string(ra.Layout.Target)), fa, fb, a.text(), b.text())
					}
				}
				compared++
			}
		}
	}
	t.Logf("%d verdicts compared, %d changed", compared, differed)
	if compared == 0 || differed < 100 {
		t.Fatalf("the layouts exercise too little: %d verdicts compared, %d changed", compared, differed)
	}
}

func checkText(t *testing.T, text string) *validate.Result {
	t.Helper()
	l, d := layout.Parse("r.yaml", []byte(text))
	if d.HasErrors() {
		t.Fatalf("generated layout does not parse: %v\n%s", d.Items, text)
	}
	return validate.Check(l, d)
}
