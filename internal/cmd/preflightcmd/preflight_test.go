package preflightcmd

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/preflight"
)

// The argument and flags land in Options; runF stands in for
// preflightRun.
func TestNewCmdPreflight(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want func(*Options)
	}{
		{"defaults", []string{"l.yaml"}, func(*Options) {}},
		{"emit", []string{"l.yaml", "--emit", "pf"}, func(o *Options) { o.Request.Emit = "pf" }},
		{"run with its settings", []string{"l.yaml", "--run", "--bytes", "1GiB", "--timeout", "90s", "--iters", "3", "--lazy-init", "--entrypoint", "python3 -m torch.distributed.run"},
			func(o *Options) {
				r := &o.Request
				r.Run, r.Bytes, r.Entrypoint, r.EntrypointGiven = true, "1GiB", "python3 -m torch.distributed.run", true
				r.Options.Timeout, r.Options.Iters, r.Options.LazyInit = 90*time.Second, 3, true
			}},
		{"several nodes", []string{"l.yaml", "--emit", "pf", "--hosts", "h0,h1", "--hosts", "h2", "--master-addr", "m", "--master-port", "010"},
			func(o *Options) {
				r := &o.Request
				r.Emit, r.Hosts, r.MasterAddr, r.MasterPortText = "pf", []string{"h0,h1", "h2"}, "m", "010"
			}},
		{"scheduler format", []string{"l.yaml", "--emit", "pf", "--format", "k8s", "--image", "i:1", "--target-version", "2026-08-22"},
			func(o *Options) {
				o.Request.Emit, o.Request.Format, o.Request.Image = "pf", "k8s", "i:1"
				o.TargetVersion = "2026-08-22"
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := execute(tt.args)
			require.NoError(t, err)
			want := &Options{IO: got.IO, Context: got.Context, Path: "l.yaml", Request: preflight.Request{
				Format: "lines", Bytes: "64MiB", Entrypoint: "torchrun", MasterPortText: "29500",
				Options: preflight.Options{Timeout: preflight.DefaultTimeout, Iters: preflight.DefaultIters}}}
			tt.want(want)
			assert.Equal(t, want, got)
			assert.NotNil(t, got.Context, "the command's context")
		})
	}
}

func TestNewCmdPreflightErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, wantErr string
		args          []string
	}{
		{"no layout", "accepts 1 arg(s), received 0", nil},
		{"unknown format", `invalid --format "json": want one of ` + "lines, sh, slurm, k8s, pytorchjob", []string{"l.yaml", "--format", "json"}},
		{"timeout not a duration", `invalid argument "5" for "--timeout" flag: time: missing unit in duration "5"`, []string{"l.yaml", "--timeout", "5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := execute(tt.args)
			assert.Nil(t, got, "runF ran")
			assert.EqualError(t, err, tt.wantErr)
		})
	}
}

func execute(args []string) (*Options, error) {
	io := &cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	var got *Options
	cmd := NewCmdPreflight(&cmdutil.Factory{IOStreams: io}, func(o *Options) error { got = o; return nil })
	cmd.SetFlagErrorFunc(cmdutil.FlagError)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetArgs(append([]string{}, args...)) // never nil: nil is os.Args
	return got, cmd.Execute()
}
