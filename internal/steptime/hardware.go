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

// GPUs are the built-in defaults (--gpu), from the vendors' data sheets:
// H100 SXM and H200 989 TFLOP/s dense BF16 and NVLink 4 at 450 GB/s per
// direction; B200 2.25 PFLOP/s dense BF16 and NVLink 5 at 900 GB/s. The
// network is one 400 Gb/s NIC per GPU (50 GB/s), as in DGX H100/H200/B200.
// Efficiency 0.4 is the MFU Megatron reaches on GPT models of this size
// (Narayanan et al. 2021, table 1: 40-52% of peak on A100).
var GPUs = map[string]Hardware{
	"H100": {Name: "H100", PeakFLOPs: 989e12, Efficiency: 0.4, NVLink: 450e9, Network: 50e9},
	"H200": {Name: "H200", PeakFLOPs: 989e12, Efficiency: 0.4, NVLink: 450e9, Network: 50e9},
	"B200": {Name: "B200", PeakFLOPs: 2250e12, Efficiency: 0.4, NVLink: 900e9, Network: 50e9},
}

// Check reports a figure that would make the model meaningless.
func (h Hardware) Check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"peak FLOP/s", h.PeakFLOPs}, {"efficiency", h.Efficiency}, {"NVLink bandwidth", h.NVLink}, {"network bandwidth", h.Network}} {
		if !(f.v > 0) || f.v > 1e30 {
			return fmt.Errorf("%s must be a positive number, got %g", f.name, f.v)
		}
	}
	if h.Efficiency > 1 {
		return fmt.Errorf("efficiency must be at most 1, got %g", h.Efficiency)
	}
	return nil
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
