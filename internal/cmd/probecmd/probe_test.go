package probecmd

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmd/cmdtest"
	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
)

// The flags land in Options with the Factory's probe; runF stands in for
// probeRun.
func TestNewCmdProbe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, want string
		args       []string
	}{
		{"default", "text", nil},
		{"json", "json", []string{"--format", "json"}},
		{"table is text", "text", []string{"--format=table"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			probe := func() (*gpuprobe.Snapshot, error) { calls++; return nil, nil }
			got, err := execute(probe, tt.args)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Format)
			_, _ = got.ProbeLocal()
			assert.Equal(t, 1, calls, "the Factory's probe")
		})
	}
}

func TestNewCmdProbeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, wantErr string
		args          []string
	}{
		{"an argument", `unknown command "gpu0" for "probe"`, []string{"gpu0"}},
		{"unknown format", `invalid --format "csv": want one of text, json`, []string{"--format", "csv"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := execute(nil, tt.args)
			assert.Nil(t, got, "runF ran")
			assert.EqualError(t, err, tt.wantErr)
		})
	}
}

// probeRun: without NVML it exits 3, the probe's error its message.
func TestProbeRunNoNVML(t *testing.T) {
	t.Parallel()
	out := &bytes.Buffer{}
	err := probeRun(&Options{IO: &cmdutil.IOStreams{Out: out}, Format: "text",
		ProbeLocal: func() (*gpuprobe.Snapshot, error) { return nil, errors.New("NVML is unavailable") }})
	code, ok := exitcode.Of(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, exitcode.NoGPU, code)
	assert.EqualError(t, err, "NVML is unavailable")
	assert.Empty(t, out.String())
}

func execute(probe func() (*gpuprobe.Snapshot, error), args []string) (*Options, error) {
	f := cmdtest.Factory()
	f.ProbeLocal = probe
	return cmdtest.Run(f, NewCmdProbe, args)
}
