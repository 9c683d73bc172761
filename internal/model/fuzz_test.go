package model

import (
	"math"
	"testing"
)

// FuzzCompute: for any model and sizes within the layout's bounds, Check
// and Compute return (no panic), and the figures keep their invariants:
// finite, non-negative, active parameters at most all of them (when
// Check passes), the
// distributed optimizer never costs more, context parallelism never adds
// activations (against the same job without it), and the same input gives the same figures.
func FuzzCompute(f *testing.F) {
	f.Add(32, 4096, 14336, 32, 8, 8192, 128256, 0, 2, 1, 4, 2, 1, 1, 1, uint8(0))
	f.Add(61, 7168, 18432, 128, 0, 4096, 129280, 256, 8, 2, 16, 1, 64, 1, 4, uint8(0xff))
	f.Add(24, 1024, 4096, 16, 16, 577, 0, 0, 2, 2, 1, 1, 1, 4, 2, uint8(0x15))
	f.Fuzz(func(t *testing.T, layers, hidden, ffn, heads, groups, seq, vocab, experts, topk, tp, pp, vpp, ep, cp, mbs int, flags uint8) {
		clamp := func(x, lo, hi int) int {
			if x < lo {
				return lo
			}
			if x > hi {
				return hi
			}
			return x
		}
		const dim = 1 << 24
		c := Config{
			NumLayers: clamp(layers, 1, 1<<12), HiddenSize: clamp(hidden, 1, dim), FFNHiddenSize: clamp(ffn, 0, dim),
			NumAttentionHeads: clamp(heads, 1, 1<<12), NumQueryGroups: clamp(groups, 0, 1<<12),
			SeqLength: clamp(seq, 1, dim), VocabSize: clamp(vocab, 0, dim), NumExperts: clamp(experts, 0, 1<<12),
			MoERouterTopK: clamp(topk, 0, 1<<12), Swiglu: flags&1 != 0, UntieEmbeddingsAndOutputWeights: flags&2 != 0,
			MultiLatentAttention: flags&4 != 0, MTPNumLayers: int(flags >> 6),
		}
		if flags&8 != 0 {
			c.Normalization = "RMSNorm"
		}
		p := Parallel{TP: clamp(tp, 1, 1<<12), PP: clamp(pp, 1, 1<<12), VPP: clamp(vpp, 0, 64), EP: clamp(ep, 1, 1<<12), CP: clamp(cp, 1, 64)}
		p.DP = 1 + int(flags>>5)
		p.NumRanks = p.TP * p.PP * p.CP * p.DP
		p.ExptTP = 1
		tr := Training{SequenceParallel: flags&16 != 0, MicroBatchSize: clamp(mbs, 1, 64)}
		if flags&32 != 0 {
			tr.RecomputeGranularity = RecomputeSelective
		}
		sound := len(Check(c, p, tr)) == 0
		e := Compute(c, p, tr)
		m := e.Megatron
		for name, v := range map[string]float64{
			"parameters": m.Parameters, "active": m.ActiveParameters, "weights": m.WeightAndOptimizerBytes,
			"activations": m.ActivationBytes, "flops": m.FLOPsPerSample, "total": e.TotalBytes(),
			"mimoplan activations": e.ActivationBytes(), "mimoplan weights": e.WeightAndOptimizerBytes(),
		} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("%s = %v for %+v %+v %+v", name, v, c, p, tr)
			}
		}
		// More experts routed to than there are: Check refuses it, and
		// Megatron's formula counts more active parameters than all.
		if sound && m.ActiveParameters > m.Parameters*(1+1e-12) {
			t.Fatalf("active %v > total %v", m.ActiveParameters, m.Parameters)
		}
		one := p
		one.CP, one.NumRanks = 1, p.NumRanks/p.CP
		whole := Compute(c, one, tr)
		if e.ActivationBytes() > whole.ActivationBytes()*(1+1e-12) {
			t.Fatalf("cp %d activations %v above cp 1's %v", p.CP, e.ActivationBytes(), whole.ActivationBytes())
		}
		d := tr
		d.UseDistributedOptimizer = true
		if w := Compute(c, p, d).Megatron.WeightAndOptimizerBytes; w > m.WeightAndOptimizerBytes*(1+1e-12) {
			t.Fatalf("distributed optimizer %v above %v", w, m.WeightAndOptimizerBytes)
		}
		if again := Compute(c, p, tr); again.Megatron != m || again.TotalBytes() != e.TotalBytes() {
			t.Fatal("not deterministic")
		}
	})
}
