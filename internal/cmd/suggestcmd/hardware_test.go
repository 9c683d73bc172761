package suggestcmd

import (
	"maps"
	"slices"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// --gpu's values are steptime.GPUs, every one.
func TestGPUNames(t *testing.T) {
	t.Parallel()
	assert.ElementsMatch(t, slices.Collect(maps.Keys(steptime.GPUs)), gpuNames)
}

func TestHardwareFlags(t *testing.T) {
	t.Parallel()
	h100, b200 := steptime.GPUs["H100"], steptime.GPUs["B200"]
	tests := []struct {
		name    string
		args    []string
		want    func(h steptime.Hardware) steptime.Hardware
		wantErr string
	}{
		{"defaults", nil, func(steptime.Hardware) steptime.Hardware { return h100 }, ""},
		{"gpu any case", []string{"--gpu", "b200"}, func(steptime.Hardware) steptime.Hardware { return b200 }, ""},
		{"overrides in their units", []string{"--peak-tflops", "500", "--efficiency", "0.5", "--nvlink-gbps", "100", "--network-gbps", "25"},
			func(h steptime.Hardware) steptime.Hardware {
				h.PeakFLOPs, h.Efficiency, h.NVLink, h.Network = 500e12, 0.5, 100e9, 25e9
				return h
			}, ""},
		{"one override keeps the rest", []string{"--gpu", "B200", "--network-gbps", "100"},
			func(steptime.Hardware) steptime.Hardware { h := b200; h.Network = 100e9; return h }, ""},
		{"a zero that was set overrides", []string{"--peak-tflops", "0"}, nil, "invalid --peak-tflops 0 (peak FLOP/s): want a number in 0.001-1e+09 TFLOP/s"},
		{"efficiency above 1", []string{"--efficiency", "2"}, nil, "efficiency"},
		{"unknown gpu", []string{"--gpu", "V100"}, nil, `invalid --gpu "V100": want one of A100, H100, H200, B200`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var h HardwareFlags
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			h.Bind(fs)
			err := fs.Parse(tt.args) // an enumerated flag refuses its value here
			var hw steptime.Hardware
			if err == nil {
				hw, err = h.Hardware()
			} else {
				err = cmdutil.FlagError(nil, err)
			}
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				code, ok := exitcode.Of(err)
				assert.True(t, ok)
				assert.Equal(t, exitcode.Usage, code)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want(h100), hw)
		})
	}
}

func TestHardwareFlagsUnsetKeepNil(t *testing.T) {
	t.Parallel()
	var h HardwareFlags
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	h.Bind(fs)
	require.NoError(t, fs.Parse([]string{"--efficiency", "0.3"}))
	assert.Nil(t, h.Over.PeakTFLOPs)
	require.NotNil(t, h.Over.Efficiency)
	assert.Equal(t, 0.3, *h.Over.Efficiency)
	assert.Nil(t, h.Over.NVLinkGBps)
	assert.Nil(t, h.Over.NetworkGBps)
	assert.Equal(t, "0", fs.Lookup("peak-tflops").DefValue, "help shows no default, as a zero Float64Var")
	assert.Equal(t, "0.3", fs.Lookup("efficiency").Value.String())
	assert.Error(t, fs.Parse([]string{"--nvlink-gbps", "fast"}))
}

// --step-model picks the model: the calibrated one (default) on the
// --gpu's data sheet with the overrides that apply to it, or the analytic
// one; an efficiency is the analytic model's alone.
func TestHardwareFlagsSelect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		want    steptime.Select
		wantErr string
	}{
		{"calibrated by default", nil, steptime.Select{HW: steptime.GPUs["H100"], Dev: steptime.Devices["H100"]}, ""},
		{"analytic", []string{"--step-model", "analytic", "--efficiency", "0.5"},
			steptime.Select{Analytic: true, HW: func() steptime.Hardware { h := steptime.GPUs["H100"]; h.Efficiency = 0.5; return h }()}, ""},
		{"overrides on the data sheet", []string{"--gpu", "B200", "--peak-tflops", "1125", "--network-gbps", "100"},
			steptime.Select{HW: func() steptime.Hardware {
				h := steptime.GPUs["B200"]
				h.PeakFLOPs, h.Network = 1125e12, 100e9
				return h
			}(),
				Dev: func() steptime.Device {
					d := steptime.Devices["B200"]
					d.BF16, d.FP8, d.Network = 1125e12, 2250e12, 100e9
					return d
				}()}, ""},
		{"efficiency with the calibrated model", []string{"--efficiency", "0.5"}, steptime.Select{}, "--step-model analytic"},
		{"unknown model", []string{"--step-model", "magic"}, steptime.Select{}, "magic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var h HardwareFlags
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			h.Bind(fs)
			err := fs.Parse(tt.args)
			var sel steptime.Select
			if err == nil {
				sel, err = h.Select()
			}
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, sel)
		})
	}
}
