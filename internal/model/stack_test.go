package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each stack choice adds its own named term, of the sign the stack makes
// it, while Megatron's figure stays what Megatron's formula gives.
func TestStackTerms(t *testing.T) {
	moe := func(c Config) Config { c.NumExperts, c.MoEFFNHiddenSize, c.MoERouterTopK = 8, 4096, 2; return c }
	for _, tc := range []struct {
		name string
		cfg  func(Config) Config
		par  Parallel
		tr   func(*Training)
		term string
		sign float64
	}{
		{"sequence parallel without selective recompute", nil, Parallel{NumRanks: 8, TP: 4}, func(t *Training) { t.SequenceParallel = true }, TermSequenceParallel, -1},
		{"gqa and swiglu widths", func(c Config) Config { c.NumQueryGroups, c.Swiglu, c.FFNHiddenSize = 4, true, 7168; return c }, Parallel{NumRanks: 8, TP: 4}, nil, TermLayerShape, 1},
		{"local layers keep the scores", nil, Parallel{NumRanks: 1}, func(t *Training) { t.TransformerImpl = ImplLocal }, TermAttentionScores, 1},
		{"unfused backend keeps the scores", nil, Parallel{NumRanks: 1}, func(t *Training) { t.AttentionBackend = AttentionUnfused }, TermAttentionScores, 1},
		{"torch rmsnorm", func(c Config) Config { c.Normalization = "RMSNorm"; return c }, Parallel{NumRanks: 1}, func(t *Training) { t.TransformerImpl = ImplLocal }, TermTorchRMSNorm, 1},
		{"moe layers", moe, Parallel{NumRanks: 8, EP: 8}, nil, TermMoEActivations, 1},
		{"full recompute", nil, Parallel{NumRanks: 1}, func(t *Training) { t.RecomputeGranularity = RecomputeFull }, TermFullRecompute, -1},
		{"full recompute, block", nil, Parallel{NumRanks: 1}, func(t *Training) {
			t.RecomputeGranularity, t.RecomputeMethod, t.RecomputeNumLayers = RecomputeFull, RecomputeBlock, 4
		}, TermFullRecompute, -1},
		{"bf16 gradients", nil, Parallel{NumRanks: 8}, func(t *Training) { t.GradReduceInBF16 = true }, TermGradBufferDtype, -1},
		{"frozen weights", nil, Parallel{NumRanks: 8}, func(t *Training) { t.Frozen = true }, TermFrozenWeights, -1},
		{"frozen language model keeps less", nil, Parallel{NumRanks: 8}, func(t *Training) { t.Frozen = true }, TermFrozenActivations, -1},
		{"frozen encoder keeps nothing", func(c Config) Config { c.VocabSize = 0; return c }, Parallel{NumRanks: 8}, func(t *Training) { t.Frozen = true }, TermFrozenActivations, -1},
		{"fp8 activations", nil, Parallel{NumRanks: 8, TP: 8}, func(t *Training) { t.FP8 = "e4m3" }, TermFP8Activations, -1},
		{"fp8 weights", nil, Parallel{NumRanks: 8, TP: 8}, func(t *Training) { t.FP8 = "hybrid" }, TermFP8Weights, 1},
		{"torch adam's step", nil, Parallel{NumRanks: 1}, func(t *Training) {
			t.TransformerImpl, t.RecomputeGranularity = ImplLocal, RecomputeFull
		}, TermOptimizerStep, 1},
		{"distributed optimizer's fp32 copy of bf16 gradients", nil, Parallel{NumRanks: 1}, func(t *Training) {
			t.UseDistributedOptimizer, t.GradReduceInBF16, t.RecomputeGranularity = true, true, RecomputeFull
		}, TermMainGradCopy, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, tr := gpt()
			if tc.cfg != nil {
				c = tc.cfg(c)
			}
			if tc.tr != nil {
				tc.tr(&tr)
			}
			e := Compute(c, tc.par, tr)
			plain, _ := gpt()
			if tc.cfg != nil {
				plain = tc.cfg(plain)
			}
			assert.Equal(t, Compute(plain, tc.par, Training{SequenceParallel: tr.SequenceParallel, RecomputeGranularity: tr.RecomputeGranularity,
				UseDistributedOptimizer: tr.UseDistributedOptimizer}).Megatron, e.Megatron, "Megatron's figure does not see the stack")
			var found *Term
			for i := range e.Terms {
				if e.Terms[i].Name == tc.term {
					found = &e.Terms[i]
				}
			}
			require.NotNil(t, found, "%s in %+v", tc.term, e.Terms)
			assert.Positive(t, found.Bytes*tc.sign, "%s: %v", tc.term, found.Bytes)
			assert.NotEmpty(t, found.Why)
		})
	}
}

// Resolve fills the defaults: Transformer Engine layers, attention auto,
// uniform recompute of one layer, micro batch 1; what is given stays.
func TestTrainingResolve(t *testing.T) {
	r := Training{}.Resolve()
	assert.Equal(t, Training{TransformerImpl: ImplTransformerEngine, AttentionBackend: AttentionAuto,
		RecomputeMethod: RecomputeUniform, RecomputeNumLayers: 1, MicroBatchSize: 1}, r)
	given := Training{TransformerImpl: ImplLocal, AttentionBackend: AttentionFlash, RecomputeMethod: RecomputeBlock, RecomputeNumLayers: 3, MicroBatchSize: 4}
	assert.Equal(t, given, given.Resolve())
}

// Communicators counts the groups with peers; Total adds their NCCL
// buffers, the allocator's slack and one CUDA context to Compute's figure.
func TestTotalAddsOverheads(t *testing.T) {
	c, tr := gpt()
	for _, tc := range []struct {
		par       Parallel
		coll, p2p int
	}{
		{Parallel{NumRanks: 1}, 0, 0},
		{Parallel{NumRanks: 2, TP: 2}, 1, 0},
		{Parallel{NumRanks: 2}, 1, 0},                      // dp 2
		{Parallel{NumRanks: 8, TP: 2, PP: 2, CP: 2}, 4, 1}, // tp, cp, dp x cp, the tied embedding; pp
		{Parallel{NumRanks: 4, TP: 2, PP: 2}, 2, 1},        // tp, embedding; pp
	} {
		coll, p2p := Communicators(c, tc.par, tr)
		assert.Equal(t, [2]int{tc.coll, tc.p2p}, [2]int{coll, p2p}, "%+v", tc.par)
		e, whole := Compute(c, tc.par, tr), Total(c, tc.par, tr)
		body := e.WeightAndOptimizerBytes() + e.ActivationBytes()
		assert.InDelta(t, body*(1+AllocatorSlackFraction)+float64(tc.coll)*NCCLCollectiveBytes+float64(tc.p2p)*NCCLP2PBytes+CUDAContextBytes, whole.TotalBytes(), 1)
	}
	tr.Communicators = 2
	_, p2p := Communicators(c, Parallel{NumRanks: 1}, tr)
	assert.Equal(t, 2, p2p, "the layout's bridges")
	m := c
	m.NumExperts, m.MoERouterTopK = 4, 2
	coll, _ := Communicators(m, Parallel{NumRanks: 4, EP: 2}, tr)
	assert.Equal(t, 5, coll, "dp, the aux loss's tp x dp x cp, tp x ep, expert dp, the expert optimizer's norm")
	e := Total(m, Parallel{NumRanks: 4, EP: 2}, tr)
	assert.Contains(t, termNames(e), TermMoEFragmentation)
}

// With expandable segments the allocator's reserve is its own measured
// fraction of the body, and neither a MoE model nor torch AdamW's step
// adds one of its own.
func TestExpandableSegmentsOverheads(t *testing.T) {
	c := Config{NumLayers: 4, HiddenSize: 1024, NumAttentionHeads: 16, SeqLength: 2048, VocabSize: 50257}
	m := c
	m.NumExperts, m.MoERouterTopK = 4, 2
	// Short samples: the peak is the optimizer's step.
	step := Config{NumLayers: 24, HiddenSize: 2048, NumAttentionHeads: 16, SeqLength: 128, VocabSize: 50257}
	for _, tc := range []struct {
		name string
		cfg  Config
		par  Parallel
		tr   Training
	}{
		{"dense", c, Parallel{NumRanks: 2}, Training{MicroBatchSize: 2}},
		{"moe", m, Parallel{NumRanks: 4, EP: 2}, Training{MicroBatchSize: 2}},
		{"torch adamw", step, Parallel{NumRanks: 1}, Training{MicroBatchSize: 1, TransformerImpl: ImplLocal}},
	} {
		def, exp := tc.tr, tc.tr
		exp.ExpandableSegments = true
		a, b := Total(tc.cfg, tc.par, def), Total(tc.cfg, tc.par, exp)
		body := b.WeightAndOptimizerBytes() + b.ActivationBytes()
		assert.InDelta(t, ExpandableSlackFraction*body, termBytes(b, TermAllocatorSlack), 1, tc.name)
		assert.InDelta(t, AllocatorSlackFraction*body, termBytes(a, TermAllocatorSlack), 1, tc.name)
		assert.NotContains(t, termNames(b), TermMoEFragmentation, tc.name)
		assert.NotContains(t, termNames(b), TermOptimizerStepSlack, tc.name)
		assert.Less(t, b.TotalBytes(), a.TotalBytes(), tc.name)
	}
	assert.Contains(t, termNames(Total(m, Parallel{NumRanks: 4, EP: 2}, Training{MicroBatchSize: 2})), TermMoEFragmentation)
	assert.Contains(t, termNames(Total(step, Parallel{NumRanks: 1}, Training{MicroBatchSize: 1, TransformerImpl: ImplLocal})), TermOptimizerStepSlack)
}

func termBytes(e Estimate, name string) float64 {
	var b float64
	for _, t := range e.Terms {
		if t.Name == name {
			b += t.Bytes
		}
	}
	return b
}

func termNames(e Estimate) []string {
	var n []string
	for _, t := range e.Terms {
		n = append(n, t.Name)
	}
	return n
}

// suggest prunes with a module's total at micro-batch 1 and one
// micro-batch in flight (plan.Model.Memory): every stack's total must
// never fall as the micro-batch or the micro-batches grow.
func TestTotalGrowsWithTheBatch(t *testing.T) {
	c, _ := gpt()
	moe := c
	moe.NumExperts, moe.MoERouterTopK, moe.Normalization = 8, 2, "RMSNorm"
	// A vocabulary whose deferred output gradients outweigh the layers.
	vocab := c
	vocab.VocabSize = 256000
	for _, tr := range []Training{
		{},
		{TransformerImpl: ImplLocal},
		{TransformerImpl: ImplLocal, RecomputeGranularity: RecomputeFull},
		{TransformerImpl: ImplLocal, RecomputeGranularity: RecomputeFull, UseDistributedOptimizer: true},
		{SequenceParallel: true, FP8: "hybrid"},
		{Frozen: true},
		{RecomputeGranularity: RecomputeFull, RecomputeMethod: RecomputeBlock, RecomputeNumLayers: 2},
		{UseDistributedOptimizer: true, GradReduceInBF16: true, DeferEmbeddingWgradCompute: true, WgradDeferralLimit: 1},
		{TransformerImpl: ImplLocal, DeferEmbeddingWgradCompute: true},
	} {
		for _, cfg := range []Config{c, moe, vocab} {
			for _, p := range []Parallel{{NumRanks: 1}, {NumRanks: 8, TP: 2, PP: 2}, {NumRanks: 8, EP: 2, CP: 2}} {
				prev := 0.0
				for _, mbs := range []int{1, 2, 4, 8} {
					for _, n := range []int{1, 2, 8} {
						u := tr
						u.MicroBatchSize, u.NumMicrobatches = mbs, n
						e := Total(cfg, p, u)
						got := e.TotalBytes()
						if n == 1 {
							assert.GreaterOrEqual(t, got, prev*(1-1e-12), "%+v %+v mbs %d", tr, p, mbs)
							prev = got
						}
						low := u
						low.MicroBatchSize, low.NumMicrobatches = 1, 1
						lo := Total(cfg, p, low)
						assert.LessOrEqual(t, lo.TotalBytes(), got*(1+1e-12), "%+v %+v mbs %d, %d micro-batches", tr, p, mbs, n)
					}
				}
			}
		}
	}
}

// What a stack choice changes, from its source: Transformer Engine's
// experts keep 2h+4 bytes a routed copy where the local layers keep 4h;
// fp8_param_gather keeps no bf16 weight beside the fp8 one; fp32
// gradient buffers need no fp32 copy in the distributed optimizer's step.
func TestStackChoiceChanges(t *testing.T) {
	moe := func() (Config, Training) {
		c, tr := gpt()
		c.NumExperts, c.MoEFFNHiddenSize, c.MoERouterTopK, c.Swiglu = 8, 1024, 2, true
		return c, tr
	}
	termOf := func(e Estimate, name string) float64 {
		for _, x := range e.Terms {
			if x.Name == name {
				return x.Bytes
			}
		}
		return 0
	}
	for _, tc := range []struct {
		name       string
		term       string
		base, with func(*Training)
		want       func(t *testing.T, base, with float64, c Config, par Parallel, tr Training)
	}{
		{"transformer engine's experts keep 2h+4 bytes a copy, local 4h", TermMoEActivations,
			func(t *Training) { t.TransformerImpl = ImplLocal }, func(t *Training) {},
			func(t *testing.T, base, with float64, c Config, par Parallel, tr Training) {
				// The formula's per-layer units without sp: tokens a rank, all layers, one micro-batch in flight.
				copies := prod(c.SeqLength, tr.MicroBatchSize, c.MoERouterTopK)
				perLayer := copies * (float64(4*c.HiddenSize) - float64(2*c.HiddenSize+4))
				assert.InEpsilon(t, perLayer*float64(c.NumLayers)*overheadNoSP, base-with, 1e-9)
			}},
		{"fp8_param_gather keeps no bf16 weight beside the fp8 one", TermFP8Weights,
			func(t *Training) { t.FP8 = "hybrid" }, func(t *Training) { t.FP8, t.FP8ParamGather = "hybrid", true },
			func(t *testing.T, base, with float64, _ Config, _ Parallel, _ Training) {
				assert.Positive(t, base)
				assert.Zero(t, with)
			}},
		{"fp32 gradient buffers need no copy", TermMainGradCopy,
			func(t *Training) {
				t.UseDistributedOptimizer, t.GradReduceInBF16, t.RecomputeGranularity = true, true, RecomputeFull
			},
			func(t *Training) { t.UseDistributedOptimizer, t.RecomputeGranularity = true, RecomputeFull },
			func(t *testing.T, base, with float64, _ Config, _ Parallel, _ Training) {
				assert.Positive(t, base)
				assert.Zero(t, with)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, tr := moe()
			par := Parallel{NumRanks: 1}
			b, w := tr, tr
			tc.base(&b)
			tc.with(&w)
			tc.want(t, termOf(Compute(c, par, b), tc.term), termOf(Compute(c, par, w), tc.term), c.Resolve(), par, tr.Resolve())
		})
	}
}
