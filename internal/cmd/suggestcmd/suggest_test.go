package suggestcmd

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
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
