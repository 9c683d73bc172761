package launchplancmd

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmd/cmdtest"
	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/launch"
)

// The flags land in Options as given, the program after "--"; runF stands
// in for launchPlanRun.
func TestNewCmdLaunchPlan(t *testing.T) {
	t.Parallel()
	defaults := launch.Options{MasterPortText: "29500", Rendezvous: launch.Static, OMPThreads: 1, LayoutArgs: true, K8s: launch.K8sOptions{Runtime: launch.DefaultRuntime}}
	tests := []struct {
		name string
		args []string
		want func(*Options)
	}{
		{"defaults", []string{"l.yaml"}, func(*Options) {}},
		{"program", []string{"l.yaml", "--", "train.py", "--lr", "1"}, func(o *Options) {
			o.Request.Options.Program = []string{"train.py", "--lr", "1"}
		}},
		{"every flag", []string{"l.yaml", "--hosts", "a,b", "--hosts", "c", "--format", "k8s", "--out", "p", "--topology-out", "t.json",
			"--env", "A=1,2", "--env", "B=", "--no-layout-args", "--omp-num-threads", "4", "--entrypoint", "python -m x", "--image", "i:1",
			"--master-addr", "m", "--master-port", "010", "--rendezvous", "c10d", "--probe", "--target-version", "2026-08-22"}, func(o *Options) {
			r := &o.Request
			r.Hosts, r.Format, r.Out, r.TopologyOut = []string{"a,b", "c"}, "k8s", "p", "t.json"
			r.Env, r.Entrypoint = []string{"A=1,2", "B="}, "python -m x"
			r.Options.LayoutArgs, r.Options.OMPThreads, r.Options.Image = false, 4, "i:1"
			r.Options.MasterAddr, r.Options.MasterPortText, r.Options.Rendezvous = "m", "010", launch.C10d
			o.NoLayoutArgs = true
			o.Layout = cmdutil.LayoutFlags{Probe: true, TargetVersion: "2026-08-22"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := cmdtest.Factory()
			got, err := cmdtest.Run(f, NewCmdLaunchPlan, tt.args)
			require.NoError(t, err)
			want := &Options{IO: f.IOStreams, Request: launch.Request{LayoutPath: "l.yaml", Format: "sh", Entrypoint: "torchrun", Options: defaults}}
			tt.want(want)
			got.ProbeLocal = nil
			assert.Equal(t, want, got)
		})
	}
}

func TestNewCmdLaunchPlanErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, wantErr string
		args          []string
	}{
		{"hosts and hostfile", "if any flags in the group [hosts hostfile] are set none of the others can be; [hostfile hosts] were all set",
			[]string{"l.yaml", "--hosts", "a", "--hostfile", "h.txt"}},
		{"unknown format", `invalid --format "text": want one of ` + strings.Join(launch.Formats, ", "), []string{"l.yaml", "--format", "text"}},
		{"unknown rendezvous", `invalid --rendezvous "etcd": want one of static, c10d`, []string{"l.yaml", "--rendezvous", "etcd"}},
		{"two layouts", "launch-plan takes one LAYOUT (then -- PROGRAM ARGS); got 2 arguments before --", []string{"a.yaml", "b.yaml", "--", "x"}},
		{"no layout", "launch-plan takes one LAYOUT (then -- PROGRAM ARGS); got 0 arguments before --", []string{"--", "train.py"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := cmdtest.Run(cmdtest.Factory(), NewCmdLaunchPlan, tt.args)
			assert.Nil(t, got, "runF ran")
			assert.EqualError(t, err, tt.wantErr)
		})
	}
}
