package steptime

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
)

// The analytic model against figures worked out by hand from published
// numbers (the data sheets' peak and bandwidths, the papers' formulas),
// written here as numbers, not as the model's code.
func TestAnalyticAgainstHandFigures(t *testing.T) {
	t.Parallel()
	h100 := GPUs["H100"] // 989 TFLOP/s dense BF16, NVLink 4 450 GB/s, 400 Gb/s NIC
	full := h100
	full.Efficiency = 1
	// Llama 3 8B's layers: hidden 4096, sequence 8192, 32 layers.
	llama8 := Shape{FLOPsPerSample: 1e12, Layers: 32, Hidden: 4096, Seq: 8192, KVDim: 1024}
	tests := []struct {
		name string
		hw   Hardware
		job  Job
		s    Shape
		m    Module
		part func(Parts) float64
		want float64 // seconds
	}{
		// One 8192 x 8192 x 8192 GEMM forward and its two backward GEMMs:
		// 3 x 2 x 8192^3 FLOPs at the full 989 TFLOP/s = 3.335 ms.
		{"a GEMM's compute at peak", full, Job{Samples: 1, MicroBatch: 1},
			Shape{FLOPsPerSample: 3 * 2 * 8192 * 8192 * 8192}, Module{Ranks: 1, TP: 1, GTPRemat: 1, CP: 1, PP: 1, DP: 1, EP: 1, ExptTP: 1, Microbatches: 1},
			func(p Parts) float64 { return p.Compute }, 0.0033352223289464106},
		// The same on 4 GPUs at 40% of the peak: 3.335 ms / 4 / 0.4.
		{"compute over 4 GPUs at 40%", h100, Job{Samples: 1, MicroBatch: 1},
			Shape{FLOPsPerSample: 3 * 2 * 8192 * 8192 * 8192}, Module{Ranks: 4, TP: 1, GTPRemat: 1, CP: 1, PP: 1, DP: 4, EP: 1, ExptTP: 1, Microbatches: 1},
			func(p Parts) float64 { return p.Compute }, 0.0033352223289464106 / 4 / 0.4},
		// Narayanan et al. 2021, sec. 2.2.1: the 1F1B bubble is (p-1)/m of
		// the ideal time: pp 4, 8 micro-batches: 3/8; interleaved over 2
		// virtual stages (p-1)/(v m): 3/16. Here the ideal time is 1 s.
		{"1F1B bubble, pp 4, m 8", full, Job{Samples: 8, MicroBatch: 1}, Shape{FLOPsPerSample: 989e12 / 2}, // 1 s of compute on 4 GPUs
			Module{Ranks: 4, TP: 1, GTPRemat: 1, CP: 1, PP: 4, DP: 1, EP: 1, ExptTP: 1, Microbatches: 8},
			func(p Parts) float64 { return p.Bubble }, 0.375},
		{"interleaved bubble, pp 4, vpp 2, m 8", full, Job{Samples: 8, MicroBatch: 1}, Shape{FLOPsPerSample: 989e12 / 2}, // 1 s of compute on 4 GPUs
			Module{Ranks: 4, TP: 1, GTPRemat: 1, CP: 1, PP: 4, VPP: 2, DP: 1, EP: 1, ExptTP: 1, Microbatches: 8},
			func(p Parts) float64 { return p.Bubble }, 0.1875},
		// Korthikanti et al. 2022: 4 all-reduces a layer of s x h bf16
		// activations (8192 x 4096 x 2 B = 64 MiB); a ring over 8 moves
		// 2 x 7/8 of it per GPU: 32 layers x 4 x 117,440,512 B =
		// 15.03 GB, at 450 GB/s 33.41 ms.
		{"tp 8 all-reduces inside a node", h100, Job{GPUsPerNode: 8, Samples: 1, MicroBatch: 1}, llama8,
			Module{Ranks: 8, TP: 8, GTPRemat: 1, CP: 1, PP: 1, DP: 1, EP: 1, ExptTP: 1, Microbatches: 1},
			func(p Parts) float64 { return p.TP }, 0.03340530119111111},
		// The same tp group straddling two nodes (ranks 4-11): 50 GB/s, 300.6 ms.
		{"tp 8 all-reduces across nodes", h100, Job{GPUsPerNode: 8, Samples: 1, MicroBatch: 1}, llama8,
			Module{Offset: 4, Ranks: 8, TP: 8, GTPRemat: 1, CP: 1, PP: 1, DP: 1, EP: 1, ExptTP: 1, Microbatches: 1},
			func(p Parts) float64 { return p.TP }, 0.30064771072},
		// Llama 3 8B's 8.03e9 fp32 gradients all-reduced over dp 8 in a
		// node: 2 x 7/8 x 8.03e9 x 4 B = 56.21 GB at 450 GB/s, 124.9 ms.
		{"dp 8 gradient all-reduce", h100, Job{GPUsPerNode: 8, Samples: 8, MicroBatch: 1}, llama8,
			Module{Ranks: 8, TP: 1, GTPRemat: 1, CP: 1, PP: 1, DP: 8, EP: 1, ExptTP: 1, Microbatches: 1, Params: 8.03e9},
			func(p Parts) float64 { return p.DP }, 0.12491111111111111},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := New(tt.hw, tt.job).Time(&tt.s, tt.m)
			assert.InEpsilon(t, tt.want, tt.part(got), 1e-12)
		})
	}
}

// GPT-3 175B (96 layers, hidden 12288, sequence 2048, vocabulary 51200):
// Narayanan et al. 2021, eq. 3, counts 96 B s l h^2 (1 + s/6h + V/16lh)
// FLOPs with activation recomputation; without it (3 passes, not 4) the
// layers are 72 B s l h^2 (1 + s/6h) and the logits 6 B s h V. Megatron
// counts causal attention's score and context GEMMs at half (s/12h):
// 72 x 2048 x 96 x 12288^2 x (1 + 2048/147456) + 6 x 2048 x 12288 x
// 51200 = 2.174868359479296e15 per sample, 1.3% below the paper's
// full-attention count.
func TestShapeOfGPT3(t *testing.T) {
	t.Parallel()
	m := &layout.Module{Model: &layout.Model{Config: model.Config{NumLayers: 96, HiddenSize: 12288, NumAttentionHeads: 96, SeqLength: 2048, VocabSize: 51200}}}
	s := ShapeOf(m)
	assert.InEpsilon(t, 2.174868359479296e15, s.FLOPsPerSample, 1e-12)
	assert.InEpsilon(t, 2.2045551734292478e15, s.FLOPsPerSample, 0.014, "the paper's count, full attention")
	// Dims: core attention 6 q s^2 per layer (q = 12288), the MLP 4h
	// wide, and about 12 l h^2 + V h parameters (GPT-3's 175B).
	assert.InEpsilon(t, 6*12288*2048*2048*96.0, s.Dims.AttnFLOPsPerSample, 1e-12)
	assert.InEpsilon(t, 12*96*12288*12288+51200*12288.0, s.Dims.DenseParams, 0.002)
	// The output layer: 6 h V per token.
	assert.InEpsilon(t, 6*12288*51200*2048.0, s.Dims.LogitsFLOPsPerSample, 1e-12)
	// The MLPs, which recompute_modules' mlp runs again: 6 h ffn 2 per
	// token and layer (GeLU: two matrices).
	assert.InEpsilon(t, 6*12288*49152*2*96*2048.0, s.Dims.DenseMLPFLOPsPerSample, 1e-12)
	assert.Equal(t, Dims{FFN: 49152, MoEFFN: 49152, AttnFLOPsPerSample: s.Dims.AttnFLOPsPerSample, LogitsFLOPsPerSample: s.Dims.LogitsFLOPsPerSample,
		DenseParams: s.Dims.DenseParams, LayerTensors: 12, OuterTensors: 4, DenseMLPFLOPsPerSample: s.Dims.DenseMLPFLOPsPerSample}, s.Dims,
		"12 tensors a layer (2 norms and 4 linear layers, each with a bias); word and position embeddings and the final norm")
	s.Dims = Dims{}
	assert.Equal(t, Shape{FLOPsPerSample: s.FLOPsPerSample, Layers: 96, Hidden: 12288, Seq: 2048, KVDim: 12288, TopK: 2}, s)
	assert.Equal(t, Shape{}, ShapeOf(&layout.Module{}), "no model, no cost")
}

func TestJob(t *testing.T) {
	t.Parallel()
	parse := func(src string) *layout.Layout {
		spec, d := layout.ParseSpec("s.yaml", []byte(src))
		require.False(t, d.HasErrors(), "%v", d.Items)
		return spec
	}
	tests := []struct {
		name  string
		spec  string
		want  Job
		lanes map[int]int // lanes -> micro-batches
	}{
		{"no batch: one sample a GPU", "version: 1\nworld_size: 8\nmodules:\n  - name: language\n",
			Job{Samples: 8, MicroBatch: 1}, map[int]int{1: 8, 4: 2, 16: 1}},
		{"global batch over lanes of micro-batches", "version: 1\ncluster: {nodes: 2, gpus_per_node: 4}\nbatch: {micro_batch_size: 2, global_batch_size: 64}\nmodules:\n  - name: language\n",
			Job{GPUsPerNode: 4, Samples: 64, MicroBatch: 2}, map[int]int{1: 32, 2: 16, 8: 4, 64: 1}},
		{"bridge: the micro-batch is global", "version: 1\ntarget: megatron-bridge\nworld_size: 4\nbatch: {micro_batch_size: 4, global_batch_size: 32}\nmodules:\n  - name: language\n",
			Job{Samples: 32, MicroBatch: 4, Bridge: true}, map[int]int{1: 8, 4: 8}},
		{"one node: no node boundary", "version: 1\ncluster: {nodes: 1, gpus_per_node: 8}\nbatch: {micro_batch_size: 1}\nmodules:\n  - name: language\n",
			Job{Samples: 8, MicroBatch: 1}, map[int]int{1: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := JobOf(parse(tt.spec))
			assert.Equal(t, tt.want, j)
			for lanes, m := range tt.lanes {
				assert.Equal(t, m, j.Microbatches(lanes), "lanes %d", lanes)
			}
		})
	}
}

func TestOverrides(t *testing.T) {
	t.Parallel()
	peak, net := 500.0, 25.0
	h, err := GPUs["B200"].With(Overrides{PeakTFLOPs: &peak, NetworkGBps: &net})
	require.NoError(t, err)
	assert.Equal(t, Hardware{Name: "B200", PeakFLOPs: 500e12, Efficiency: 0.4, NVLink: 900e9, Network: 25e9}, h)
	bad := 1.5
	_, err = h.With(Overrides{Efficiency: &bad})
	assert.EqualError(t, err, "invalid --efficiency 1.5 (efficiency): want a number in 0.001-1")
	for _, v := range []float64{1e-320, math.NaN(), math.Inf(1), 1e308} {
		for _, o := range []Overrides{{PeakTFLOPs: &v}, {Efficiency: &v}, {NVLinkGBps: &v}, {NetworkGBps: &v}} {
			_, err := h.With(o)
			assert.Error(t, err, "%g", v)
		}
	}
}
