package importcmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/cmd/cmdtest"
	"github.com/mimoplan/mimoplan/internal/exitcode"
)

// The subcommand, its flags and the argv after "--" land in Options;
// runF stands in for importRun.
func TestNewCmdImport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want Options
	}{
		{"megatron-lm defaults", []string{"megatron-lm", "--", "torchrun", "--nnodes=1", "pretrain_mimo.py"},
			Options{Source: "megatron-lm", Argv: []string{"torchrun", "--nnodes=1", "pretrain_mimo.py"}, Encoder: "vision"}},
		{"megatron-lm flags", []string{"megatron-lm", "--encoder", "audio", "--name", "job", "--out", "l.yaml", "--", "--mimo-llm-tp", "2"},
			Options{Source: "megatron-lm", Argv: []string{"--mimo-llm-tp", "2"}, Encoder: "audio", Name: "job", Out: "l.yaml"}},
		{"bridge-env defaults", []string{"bridge-env"}, Options{Source: "bridge-env"}},
		{"bridge-env flags", []string{"bridge-env", "--from-script", "run.sh", "--name", "llava", "--out", "l.yaml"},
			Options{Source: "bridge-env", FromScript: "run.sh", Name: "llava", Out: "l.yaml"}},
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

func TestNewCmdImportErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, wantErr string
		args          []string
		usage         bool // an exitcode usage error (root.Execute gives cobra's exit 2 too)
	}{
		{"megatron-lm without --", "unknown flag: --mimo-llm-tp", []string{"megatron-lm", "--mimo-llm-tp", "2"}, true},
		{"megatron-lm argv without --", "import megatron-lm takes the launch's argv after --", []string{"megatron-lm", "pretrain_mimo.py"}, true},
		{"megatron-lm argv before --", "import megatron-lm takes the launch's argv after --", []string{"megatron-lm", "x", "--", "y"}, true},
		{"megatron-lm nothing after --", "import megatron-lm takes the launch's argv after --", []string{"megatron-lm", "--"}, true},
		{"bridge-env argument", `unknown command "run.sh" for "import bridge-env"`, []string{"bridge-env", "run.sh"}, false},
		{"bridge-env encoder", "unknown flag: --encoder", []string{"bridge-env", "--encoder", "x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := execute(tt.args)
			assert.Nil(t, got, "runF ran")
			assert.EqualError(t, err, tt.wantErr)
			code, ok := exitcode.Of(err)
			assert.Equal(t, tt.usage, ok)
			if ok {
				assert.Equal(t, exitcode.Usage, code)
			}
		})
	}
}

func execute(args []string) (*Options, error) {
	return cmdtest.Run(cmdtest.Factory(), NewCmdImport, args)
}
