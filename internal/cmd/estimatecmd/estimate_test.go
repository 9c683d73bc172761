package estimatecmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmd/cmdtest"
)

// The argument and flags land in Options; runF stands in for estimateRun.
func TestNewCmdEstimate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want Options
	}{
		{"defaults", []string{"l.yaml"}, Options{Layout: "l.yaml", Format: "text"}},
		{"json", []string{"l.yaml", "--format", "json"}, Options{Layout: "l.yaml", Format: "json"}},
		{"table is text", []string{"l.yaml", "--format", "table"}, Options{Layout: "l.yaml", Format: "text"}},
		{"target version", []string{"-", "--target-version", "6894"}, Options{Layout: "-", Format: "text", TargetVersion: "6894"}},
		{"measured", []string{"l.yaml", "--format", "html", "--measured", "m.json", "--measured-run", "run1"},
			Options{Layout: "l.yaml", Format: "html", Measured: "m.json", MeasuredConfig: "run1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := execute(tt.args)
			require.NoError(t, err)
			tt.want.IO = got.IO
			assert.Equal(t, &tt.want, got)
		})
	}
}

func TestNewCmdEstimateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, wantErr string
		args          []string
	}{
		{"no layout", "accepts 1 arg(s), received 0", nil},
		{"two layouts", "accepts 1 arg(s), received 2", []string{"a.yaml", "b.yaml"}},
		{"unknown format", `invalid --format "yaml": want one of text, json, html`, []string{"a.yaml", "--format", "yaml"}},
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
	return cmdtest.Run(cmdtest.Factory(), NewCmdEstimate, args)
}
