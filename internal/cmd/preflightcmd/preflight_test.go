package preflightcmd

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmd/cmdtest"
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
		{"out", []string{"l.yaml", "--out", "pf"}, func(o *Options) { o.Request.Emit = "pf" }},
		{"emit, the old name of out", []string{"l.yaml", "--emit", "pf"}, func(o *Options) { o.Request.Emit = "pf" }},
		{"sbatch", []string{"l.yaml", "--out", "pf", "--format", "slurm", "--sbatch", "partition=gpu", "--sbatch", "exclusive"}, func(o *Options) {
			o.Request.Emit, o.Request.Format, o.Request.Sbatch = "pf", "slurm", []string{"partition=gpu", "exclusive"}
		}},
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
			got, stderr, err := executeStderr(tt.args)
			require.NoError(t, err)
			if slices.Contains(tt.args, "--emit") {
				assert.Equal(t, "mimoplan: --emit is deprecated: use --out, its name in every command\n", stderr)
			} else {
				assert.Empty(t, stderr)
			}
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
		{"out and emit", "if any flags in the group [out emit] are set none of the others can be; [emit out] were all set", []string{"l.yaml", "--out", "a", "--emit", "b"}},
		{"unknown format", `invalid --format "json": want one of ` + "lines, sh, slurm, k8s, pytorchjob", []string{"l.yaml", "--format", "json"}},
		{"timeout not a duration", `invalid --timeout "5": want a duration such as 90s or 5m`, []string{"l.yaml", "--timeout", "5"}},
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
	got, _, err := executeStderr(args)
	return got, err
}

func executeStderr(args []string) (*Options, string, error) {
	var stderr bytes.Buffer
	f := cmdtest.Factory()
	f.IOStreams.ErrOut = &stderr
	got, err := cmdtest.Run(f, NewCmdPreflight, args)
	return got, stderr.String(), err
}
