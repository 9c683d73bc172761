package validatecmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmd/cmdtest"
	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/exitcode"
)

// The arguments and flags land in Options; runF stands in for
// validateRun.
func TestNewCmdValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want Options
	}{
		{"defaults", []string{"a.yaml"}, Options{Paths: []string{"a.yaml"}, Format: "text"}},
		{"several files and stdin", []string{"a.yaml", "-", "b.yaml"}, Options{Paths: []string{"a.yaml", "-", "b.yaml"}, Format: "text"}},
		{"every flag", []string{"a.yaml", "--format", "sarif", "--strict", "--probe", "--target-version", "2026-08-22"},
			Options{Paths: []string{"a.yaml"}, Format: "sarif", Strict: true, Layout: cmdutil.LayoutFlags{Probe: true, TargetVersion: "2026-08-22"}}},
		{"table is text", []string{"a.yaml", "--format", "table"}, Options{Paths: []string{"a.yaml"}, Format: "text"}},
		{"github", []string{"a.yaml", "--format=github"}, Options{Paths: []string{"a.yaml"}, Format: "github"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := execute(t, tt.args)
			require.NoError(t, err)
			require.NotNil(t, got.ProbeLocal, "the Factory's probe")
			got.ProbeLocal = nil
			tt.want.IO = got.IO
			assert.Equal(t, &tt.want, got)
		})
	}
}

func TestNewCmdValidateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, wantErr string
		args          []string
	}{
		{"no layout", "requires at least 1 arg(s), only received 0", nil},
		{"unknown format", `invalid --format "xml": want one of text, json, github, sarif`, []string{"a.yaml", "--format", "xml"}},
		{"unknown flag", "unknown flag: --strictly", []string{"a.yaml", "--strictly"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := execute(t, tt.args)
			assert.Nil(t, got, "runF ran")
			assert.EqualError(t, err, tt.wantErr)
		})
	}
}

// execute runs validate with args as root.Execute would (flag errors are
// usage errors) and returns the Options runF saw.
func execute(t *testing.T, args []string) (*Options, error) {
	t.Helper()
	f := cmdtest.Factory()
	f.ProbeLocal = cmdutil.New("").ProbeLocal
	got, err := cmdtest.Run(f, NewCmdValidate, args)
	if err != nil {
		if code, ok := exitcode.Of(err); ok {
			assert.Equal(t, exitcode.Usage, code, "%v", err)
		}
	}
	return got, err
}
