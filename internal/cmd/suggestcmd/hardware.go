package suggestcmd

import (
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// HardwareFlags are the step-time model's hardware: a GPU's defaults
// (--gpu) and the flags that override its figures, bound straight into
// steptime.Overrides. A flag that was set, to any value, overrides.
type HardwareFlags struct {
	GPU       string
	StepModel string // calibrated (default) or analytic
	Over      steptime.Overrides
}

var stepModels = []string{"calibrated", "analytic"}

// gpuNames are the GPUs of steptime.GPUs, in --gpu's order.
var gpuNames = []string{"A100", "H100", "H200", "B200"}

// Bind adds --gpu, --peak-tflops, --efficiency, --nvlink-gbps and
// --network-gbps to fs.
func (h *HardwareFlags) Bind(fs *pflag.FlagSet) {
	cmdutil.StringEnumFoldVar(fs, &h.GPU, "gpu", "H100", "GPU whose data sheet the step-time model uses: "+strings.Join(gpuNames, ", "), gpuNames...)
	cmdutil.StringEnumVar(fs, &h.StepModel, "step-model", "calibrated", "step-time model: calibrated (fitted to published runs) or analytic", stepModels...)
	fs.Var(overrideValue{&h.Over.PeakTFLOPs}, "peak-tflops", "dense BF16 TFLOP/s per GPU (default: the --gpu's)")
	fs.Var(overrideValue{&h.Over.Efficiency}, "efficiency", "fraction of the peak reached, 0-1 (default 0.4; --step-model analytic only)")
	fs.Var(overrideValue{&h.Over.NVLinkGBps}, "nvlink-gbps", "GB/s per GPU inside a node (default: the --gpu's)")
	fs.Var(overrideValue{&h.Over.NetworkGBps}, "network-gbps", "GB/s per GPU across nodes (default 50)")
}

// Hardware is the --gpu's figures with the overrides set, checked; a
// usage error otherwise.
func (h *HardwareFlags) Hardware() (steptime.Hardware, error) {
	hw, ok := steptime.GPUs[strings.ToUpper(h.GPU)]
	if !ok {
		return steptime.Hardware{}, exitcode.Usagef("invalid --gpu %q: want one of %s", h.GPU, strings.Join(gpuNames, ", "))
	}
	hw, err := hw.With(h.Over)
	if err != nil {
		return steptime.Hardware{}, exitcode.Usagef("%v", err)
	}
	return hw, nil
}

// Select is the step-time model the flags name, with the --gpu's figures
// and the overrides set, checked; a usage error otherwise.
func (h *HardwareFlags) Select() (steptime.Select, error) {
	hw, err := h.Hardware()
	if err != nil {
		return steptime.Select{}, err
	}
	sel := steptime.Select{Analytic: h.StepModel == "analytic", HW: hw}
	if sel.Analytic {
		return sel, nil
	}
	sel.Dev, err = steptime.Devices[strings.ToUpper(h.GPU)].With(h.Over)
	if err != nil {
		return steptime.Select{}, exitcode.Usagef("%v", err)
	}
	return sel, nil
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
