package rendercmd

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmd/cmdtest"
	"github.com/mimoplan/mimoplan/internal/cmdutil"
	"github.com/mimoplan/mimoplan/internal/render"
)

// The flags land in Options as given; runF stands in for renderRun.
func TestNewCmdRender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want Options
	}{
		{[]string{"l.yaml"}, Options{Path: "l.yaml", By: "group", Render: render.Options{Format: "text", Rank: -1}}},
		{[]string{"l.yaml", "--format", "csv", "--by", "rank", "--limit", "3", "--group", "tp,dp", "--module", "vision"},
			Options{Path: "l.yaml", By: "rank", Render: render.Options{Format: "csv", Rank: -1, ByRank: true, Limit: 3, Groups: []string{"tp", "dp"}, Modules: []string{"vision"}}}},
		{[]string{"l.yaml", "--rank", "0", "--full", "--all-groups"},
			Options{Path: "l.yaml", By: "group", Render: render.Options{Format: "text", Rank: 0, HasRank: true, Full: true, AllGroups: true}}},
		{[]string{"l.yaml", "--format", "table", "--offset", "64"},
			Options{Path: "l.yaml", By: "group", Render: render.Options{Format: "text", Rank: -1, Offset: 64}}},
		{[]string{"-", "--target-version", "6894"},
			Options{Path: "-", By: "group", Render: render.Options{Format: "text", Rank: -1}, TargetVersion: "6894"}},
	}
	for _, tt := range tests {
		t.Run(tt.args[len(tt.args)-1], func(t *testing.T) {
			t.Parallel()
			f := cmdtest.Factory()
			got, err := cmdtest.Run(f, NewCmdRender, tt.args)
			require.NoError(t, err)
			tt.want.IO = f.IOStreams
			tt.want.Render.Width = cmdutil.TerminalWidth(f.IOStreams.Out, render.DefaultWidth) // COLUMNS, or the default
			assert.Equal(t, &tt.want, got)
		})
	}
}

func TestNewCmdRenderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		wantErr string
		args    []string
	}{
		{`invalid --format "sarif": want one of ` + strings.Join(render.Formats, ", "), []string{"l.yaml", "--format", "sarif"}},
		{`invalid --by "node": want one of group, rank`, []string{"l.yaml", "--by", "node"}},
		{`invalid --rank "x": want a whole number`, []string{"l.yaml", "--rank", "x"}},
		{"accepts 1 arg(s), received 2", []string{"a.yaml", "b.yaml"}},
	}
	for _, tt := range tests {
		got, err := cmdtest.Run(cmdtest.Factory(), NewCmdRender, tt.args)
		assert.Nil(t, got, "runF ran")
		assert.EqualError(t, err, tt.wantErr)
	}
}
