package steptime

// A GEMM's time as the lent H100 measured it over 96 shapes in each dtype
// (testdata/measured/attention-h100.json, fp8_gemms: m 2,048-16,384, n
// 1,536-32,768, k 512-32,768; torch._scaled_mm for fp8): its FLOPs at a
// share of the tensor peak, its bf16 output at a share of the HBM
// bandwidth, and a fixed time, least squares in the relative error
// (scripts/fit-gemm-roofline.py; rms log error 0.062 bf16, 0.053 fp8; the
// inputs' bytes take no weight). fp8 halves the FLOPs' time but not the
// output's nor the fixed time, which it doubles, so its GEMMs lose more to
// a narrow shard: at m = n = 8,192 the measured fp8 speed-up over bf16 is
// 1.49 at k = 1,024 and 1.83 at k = 4,096. Other GPUs: the same shares of
// their peak and HBM, the same fixed time.
type roofline struct {
	peakShare, hbmShare, fixed float64
}

var (
	bf16Roofline = roofline{peakShare: 0.724, hbmShare: 0.766, fixed: 9.45e-6}
	fp8Roofline  = roofline{peakShare: 0.694, hbmShare: 0.879, fixed: 21.10e-6}
)

// gemmTime is a GEMM of m x k by k x n at the roofline r on a GPU of peak
// FLOP/s and hbm bytes/s.
func (r roofline) gemmTime(m, n, k, peak, hbm float64) float64 {
	return 2*m*n*k/(r.peakShare*peak) + bf16Bytes*m*n/(r.hbmShare*hbm) + r.fixed
}

// passes is a linear layer's forward, data-gradient and weight-gradient
// GEMMs: m tokens through a k-to-n weight.
func (r roofline) passes(m, n, k, peak, hbm float64) float64 {
	return r.gemmTime(m, n, k, peak, hbm) + r.gemmTime(m, k, n, peak, hbm) + r.gemmTime(n, k, m, peak, hbm)
}

// tpPenalty is shardPenalty of the layers of s that layers gives, split t
// ways, at tokens tokens a GEMM: tensor parallelism's narrower GEMMs (the
// dense layers by tp, the routed experts by expert tp). The local stack
// measures its GEMMs as it runs them (LocalConstants.GEMMLatency): 1.
func (c *Calibrated) tpPenalty(s *Shape, t int, tokens float64, layers func(*Shape, *[4]linear) []linear) float64 {
	if c.local() {
		return 1
	}
	var buf [4]linear
	return c.shardPenalty(tokens, layers(s, &buf), t)
}

// linear is a linear layer's input and output widths, and how many of it
// a layer holds on average (a dense MLP only in the dense layers).
type linear struct{ in, out, n float64 }

// shardPenalty is how much longer a layer's GEMMs take split t ways than
// whole, per FLOP, each multiplying tokens tokens: layers alternate
// column-parallel (the output split: QKV, fc1) and row-parallel (the input
// split: the attention projection, fc2), as Megatron's tensor parallelism
// splits them (Shoeybi et al. 2019, sec. 3). A shard does a t-th of the
// FLOPs but writes the full width of a row-parallel layer's output, its
// column-parallel input's gradient and the same fixed time. At least 1; 1
// when t is 1.
func (c *Calibrated) shardPenalty(tokens float64, layers []linear, t int) float64 {
	if t < 2 || tokens <= 0 || len(layers) == 0 {
		return 1
	}
	r, peak := bf16Roofline, c.Dev.BF16
	if c.Train.FP8 != "" && c.Dev.FP8 > 0 {
		r, peak = fp8Roofline, c.Dev.FP8
	}
	f := float64(t)
	var whole, split float64
	for i, l := range layers {
		whole += l.n * r.passes(tokens, l.out, l.in, peak, c.Dev.HBM)
		if i%2 == 0 {
			split += l.n * r.passes(tokens, l.out/f, l.in, peak, c.Dev.HBM)
		} else {
			split += l.n * r.passes(tokens, l.out, l.in/f, peak, c.Dev.HBM)
		}
	}
	if whole <= 0 {
		return 1
	}
	return max(1, split*f/whole)
}

// gate is fc1's width over the MLP's: two with a gated MLP (swiglu).
func gate(d *Dims) float64 {
	if d.Gated {
		return 2
	}
	return 1
}

// denseLayers is the linear layers outside the routed experts: every
// layer's QKV and attention projection, and the dense layers' fc1 and fc2
// (a MoE model's first layers, or all of a dense model's), as a share of
// the layers (none for a Shape without its widths).
func denseLayers(s *Shape, buf *[4]linear) []linear {
	h, ffn := float64(s.Hidden), float64(s.Dims.FFN)
	if h == 0 || ffn == 0 {
		return nil
	}
	kv := float64(s.KVDim)
	if kv == 0 {
		kv = h
	}
	mlp := 1.0
	if s.Layers > 0 {
		mlp = float64(max(0, s.Layers-s.MoELayers)) / float64(s.Layers)
	}
	*buf = [4]linear{{h, h + 2*kv, 1}, {h, h, 1}, {h, gate(&s.Dims) * ffn, mlp}, {ffn, h, mlp}}
	return buf[:]
}

// expertLayers is a routed expert's fc1 and fc2.
func expertLayers(s *Shape, buf *[4]linear) []linear {
	h, ffn := float64(s.Hidden), float64(s.Dims.MoEFFN)
	if h == 0 || ffn == 0 {
		return nil
	}
	buf[0], buf[1] = linear{h, gate(&s.Dims) * ffn, 1}, linear{ffn, h, 1}
	return buf[:2]
}
