package steptime

import "fmt"

// Hardware holds the figures of the analytic model (docs/suggest.md).
type Hardware struct {
	Name       string
	PeakFLOPs  float64 // dense BF16 FLOP/s per GPU
	Efficiency float64 // fraction of the peak a layer reaches (model FLOPs utilisation)
	NVLink     float64 // bytes/s per GPU inside a node
	Network    float64 // bytes/s per GPU across nodes
}

// GPUs are the built-in defaults (--gpu), from the vendors' data sheets
// (Devices cites them; A100: 312 TFLOP/s, NVLink 3 at 300 GB/s, one
// 200 Gb/s NIC a GPU):
// H100 SXM and H200 989 TFLOP/s dense BF16 and NVLink 4 at 450 GB/s per
// direction; B200 2.25 PFLOP/s dense BF16 and NVLink 5 at 900 GB/s. The
// network is one 400 Gb/s NIC per GPU (50 GB/s), as in DGX H100/H200/B200.
// Efficiency 0.4 is the MFU Megatron reaches on GPT models of this size
// (Narayanan et al. 2021, table 1: 40-52% of peak on A100).
var GPUs = map[string]Hardware{
	"A100": {Name: "A100", PeakFLOPs: 312e12, Efficiency: 0.4, NVLink: 300e9, Network: 25e9},
	"H100": {Name: "H100", PeakFLOPs: 989e12, Efficiency: 0.4, NVLink: 450e9, Network: 50e9},
	"H200": {Name: "H200", PeakFLOPs: 989e12, Efficiency: 0.4, NVLink: 450e9, Network: 50e9},
	"B200": {Name: "B200", PeakFLOPs: 2250e12, Efficiency: 0.4, NVLink: 900e9, Network: 50e9},
}

// The ranges Check accepts: wide around any real GPU (a GFLOP/s to a
// ZFLOP/s; an efficiency of 0.1% to 1; a MB/s to a PB/s), and narrow
// enough that no time the model computes from them overflows to +Inf or
// NaN (--efficiency 1e-320 passed a positivity check and printed NaN).
var hardwareRanges = []struct {
	name, flag, unit string
	lo, hi, scale    float64
	get              func(h *Hardware) float64
}{
	{"peak FLOP/s", "--peak-tflops", "TFLOP/s", 1e9, 1e21, 1e12, func(h *Hardware) float64 { return h.PeakFLOPs }},
	{"efficiency", "--efficiency", "", 1e-3, 1, 1, func(h *Hardware) float64 { return h.Efficiency }},
	{"NVLink bandwidth", "--nvlink-gbps", "GB/s", 1e6, 1e15, 1e9, func(h *Hardware) float64 { return h.NVLink }},
	{"network bandwidth", "--network-gbps", "GB/s", 1e6, 1e15, 1e9, func(h *Hardware) float64 { return h.Network }},
}

// Check reports a figure that would make the model meaningless: outside
// hardwareRanges, NaN or infinite.
func (h Hardware) Check() error {
	for _, r := range hardwareRanges {
		v := r.get(&h)
		if !(v >= r.lo && v <= r.hi) { // false for NaN
			return fmt.Errorf("invalid %s %g (%s): want a number in %g-%g%s", r.flag, v/r.scale, r.name, r.lo/r.scale, r.hi/r.scale, unitText(r.unit))
		}
	}
	return nil
}

func unitText(u string) string {
	if u == "" {
		return ""
	}
	return " " + u
}

// Overrides replace figures of a Hardware, in the units users give them;
// nil keeps the default.
type Overrides struct {
	PeakTFLOPs  *float64 // dense BF16 TFLOP/s per GPU
	Efficiency  *float64 // a fraction
	NVLinkGBps  *float64 // GB/s per GPU inside a node
	NetworkGBps *float64 // GB/s per GPU across nodes
}

// With is h with the overrides set, checked.
func (h Hardware) With(o Overrides) (Hardware, error) {
	for _, f := range []struct {
		dst   *float64
		src   *float64
		scale float64
	}{{&h.PeakFLOPs, o.PeakTFLOPs, 1e12}, {&h.Efficiency, o.Efficiency, 1}, {&h.NVLink, o.NVLinkGBps, 1e9}, {&h.Network, o.NetworkGBps, 1e9}} {
		if f.src != nil {
			*f.dst = *f.src * f.scale
		}
	}
	return h, h.Check()
}
