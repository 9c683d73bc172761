package suggestcmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmd/cmdtest"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
	"github.com/mimoplan/mimoplan/internal/plan"
)

// --probe lands in Options with the Factory's probe; runF stands in for
// suggestRun, so the probe is never called.
func TestNewCmdSuggestProbe(t *testing.T) {
	t.Parallel()
	for _, probe := range []bool{false, true} {
		calls := 0
		f := cmdtest.Factory()
		f.ProbeLocal = func() (*gpuprobe.Snapshot, error) { calls++; return nil, nil }
		args := []string{"spec.yaml"}
		if probe {
			args = append(args, "--probe")
		}
		got, err := cmdtest.Run(f, NewCmdSuggest, args)
		require.NoError(t, err)
		assert.Equal(t, "spec.yaml", got.Spec)
		assert.Equal(t, probe, got.Probe)
		require.NotNil(t, got.ProbeLocal)
		_, _ = got.ProbeLocal()
		assert.Equal(t, 1, calls, "the Factory's probe")
	}
}

// --headroom reads a share of gpu_memory or a size; anything else is a
// usage error naming the flag.
func TestHeadroomFlag(t *testing.T) {
	tests := []struct {
		in          string
		frac, bytes float64
		wantErr     string
	}{
		{"5%", 0.05, -1, ""},
		{"0%", 0, -1, ""},
		{"4GiB", 0, 4 << 30, ""},
		{"0", 0, 0, ""},
		{"2.5 GB", 0, 2.5e9, ""},
		{"100%", 0, 0, "invalid --headroom \"100%\""},
		{"-1%", 0, 0, "invalid --headroom \"-1%\""},
		{"4", 0, 0, "invalid --headroom: want a size"},
		{"lots", 0, 0, "invalid --headroom: want a size"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			frac, bytes, err := headroom(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.frac, frac)
			assert.Equal(t, tt.bytes, bytes)
		})
	}
}

// The flags land in Options; --top and --all exclude each other.
func TestNewCmdSuggest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		want    func(*Options)
		wantErr string
	}{
		{"defaults", []string{"spec.yaml"}, func(*Options) {}, ""},
		{"top", []string{"spec.yaml", "--top", "2", "--format", "json", "--out", "l.yaml", "--gtp", "--headroom", "4GiB"},
			func(o *Options) { o.Top, o.Format, o.Out, o.GTP, o.Headroom = 2, "json", "l.yaml", true, "4GiB" }, ""},
		{"all", []string{"spec.yaml", "--all", "--format", "table"}, func(o *Options) { o.All = true }, ""},
		{"stdin", []string{"-", "--format", "html"}, func(o *Options) { o.Spec, o.Format = "-", "html" }, ""},
		{"gpu in any case", []string{"spec.yaml", "--gpu", "b200", "--step-model", "analytic"}, func(o *Options) { o.HW.GPU, o.HW.StepModel = "B200", "analytic" }, ""},
		{"target version", []string{"spec.yaml", "--target-version", "2026-08-22"}, func(o *Options) { o.TargetVersion = "2026-08-22" }, ""},
		{"unknown gpu", []string{"spec.yaml", "--gpu", "V100"}, nil, `invalid --gpu "V100": want one of A100, H100, H200, B200`},
		{"top and all", []string{"spec.yaml", "--top", "1", "--all"}, nil,
			"if any flags in the group [top all] are set none of the others can be; [all top] were all set"},
		{"unknown format", []string{"spec.yaml", "--format", "csv"}, nil, `invalid --format "csv": want one of text, json, yaml, html`},
		{"no spec", []string{}, nil, "accepts 1 arg(s), received 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := cmdtest.Factory()
			got, err := cmdtest.Run(f, NewCmdSuggest, tt.args)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				assert.Nil(t, got, "runF ran")
				return
			}
			require.NoError(t, err)
			want := &Options{IO: f.IOStreams, Spec: "spec.yaml", Top: 5, Format: "text", Headroom: "10%",
				HW: HardwareFlags{GPU: "H100", StepModel: "calibrated"}, MaxNodes: plan.DefaultMaxNodes}
			tt.want(want)
			assert.Equal(t, want, got)
		})
	}
}
