package steptime

import (
	"fmt"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// Select is the step-time model a command asked for: the calibrated model
// on Dev (the default), or with Analytic the analytic one on HW.
type Select struct {
	Analytic bool
	HW       Hardware
	Dev      Device
}

// For is the selected model for spec: its job, and for the calibrated
// model the settings of its training block.
func (s Select) For(spec *layout.Layout) Model {
	j := JobOf(spec)
	if s.Analytic {
		return New(s.HW, j)
	}
	var t layout.Module
	for i := range spec.Modules {
		if spec.Modules[i].Name == grid.LanguageModule {
			t = spec.Modules[i]
		}
	}
	tr := spec.ModelTraining(&t, 1)
	// Sequence parallelism is a module's (Dims.SequenceParallel).
	tr.SequenceParallel = false
	return NewCalibrated(s.Dev, j, tr)
}

// With is d with the overrides that apply to it set, checked: the peak
// (the FP8 peak scaled with it), NVLink and network bandwidths. An
// efficiency is the analytic model's alone: the calibrated model's depends
// on the GEMMs' shapes.
func (d Device) With(o Overrides) (Device, error) {
	if o.Efficiency != nil {
		return d, fmt.Errorf("an efficiency is the analytic step-time model's (--step-model analytic): the calibrated model's depends on each GEMM's shape")
	}
	if o.PeakTFLOPs != nil {
		p := *o.PeakTFLOPs * 1e12
		d.FP8 *= p / d.BF16
		d.BF16 = p
	}
	if o.NVLinkGBps != nil {
		d.NVLink = *o.NVLinkGBps * 1e9
	}
	if o.NetworkGBps != nil {
		d.Network = *o.NetworkGBps * 1e9
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"peak FLOP/s", d.BF16}, {"NVLink bandwidth", d.NVLink}, {"network bandwidth", d.Network}} {
		if !(f.v > 0) || f.v > 1e30 {
			return d, fmt.Errorf("%s must be a positive number, got %g", f.name, f.v)
		}
	}
	return d, nil
}
