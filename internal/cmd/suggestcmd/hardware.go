package suggestcmd

import (
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// HardwareFlags are the step-time model's hardware: a GPU's defaults
// (--gpu) and the flags that override its figures, bound straight into
// steptime.Overrides. A flag that was set, to any value, overrides.
type HardwareFlags struct {
	GPU  string
	Over steptime.Overrides
}

// Bind adds --gpu, --peak-tflops, --efficiency, --nvlink-gbps and
// --network-gbps to fs.
func (h *HardwareFlags) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&h.GPU, "gpu", "H100", "GPU whose defaults the step-time model uses: H100, H200, B200")
	fs.Var(overrideValue{&h.Over.PeakTFLOPs}, "peak-tflops", "dense BF16 TFLOP/s per GPU (default: the --gpu's)")
	fs.Var(overrideValue{&h.Over.Efficiency}, "efficiency", "fraction of the peak reached, 0-1 (default 0.4)")
	fs.Var(overrideValue{&h.Over.NVLinkGBps}, "nvlink-gbps", "GB/s per GPU inside a node (default: the --gpu's)")
	fs.Var(overrideValue{&h.Over.NetworkGBps}, "network-gbps", "GB/s per GPU across nodes (default 50)")
}

// Hardware is the --gpu's figures with the overrides set, checked; a
// usage error otherwise.
func (h *HardwareFlags) Hardware() (steptime.Hardware, error) {
	hw, ok := steptime.GPUs[strings.ToUpper(h.GPU)]
	if !ok {
		return steptime.Hardware{}, exitcode.Usagef("invalid --gpu %q: want one of H100, H200, B200", h.GPU)
	}
	hw, err := hw.With(h.Over)
	if err != nil {
		return steptime.Hardware{}, exitcode.Usagef("%v", err)
	}
	return hw, nil
}

// overrideValue is a float flag that records that it was set.
type overrideValue struct{ p **float64 }

func (v overrideValue) String() string {
	if *v.p == nil {
		return "0"
	}
	return strconv.FormatFloat(**v.p, 'g', -1, 64)
}

func (v overrideValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	*v.p = &f
	return nil
}

// Type is pflag's name of a float64 flag, so help reads as before.
func (v overrideValue) Type() string { return "float64" }
