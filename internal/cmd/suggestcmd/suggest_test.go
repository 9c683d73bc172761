package suggestcmd

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
	"github.com/mimoplan/mimoplan/internal/plan"
)

// --probe lands in Options with the Factory's probe; runF stands in for
// suggestRun, so the probe is never called.
func TestNewCmdSuggestProbe(t *testing.T) {
	t.Parallel()
	for _, probe := range []bool{false, true} {
		io := &cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
		calls := 0
		f := &cmdutil.Factory{IOStreams: io, ProbeLocal: func() (*gpuprobe.Snapshot, error) { calls++; return nil, nil }}
		var got *Options
		cmd := NewCmdSuggest(f, func(o *Options) error { got = o; return nil })
		args := []string{"spec.yaml"}
		if probe {
			args = append(args, "--probe")
		}
		cmd.SetArgs(args)
		require.NoError(t, cmd.Execute())
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
