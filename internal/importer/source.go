package importer

import (
	"fmt"
	"strings"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/megatron"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// BridgeSource reads the MIMO_* variables from the shell script at path, or,
// when path is "", from environ (os.Environ's "NAME=VALUE" entries), into a
// layout.
func BridgeSource(path string, environ []string) (*Layout, error) {
	env := map[string]string{}
	var training []Setting
	var layoutEnv []layout.EnvVar
	if path != "" {
		f, err := layout.OpenRegular(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		var topology []byte
		if env, topology, err = readScript(f, megatron.BridgeEnvPrefix); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if topology != nil {
			// A launch-plan script: its topology carries the training
			// settings, which the MIMO_* variables cannot.
			if training, err = topologyTraining(topology); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			if layoutEnv, err = topologyEnv(topology); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	} else {
		for _, kv := range environ {
			k, val, _ := strings.Cut(kv, "=")
			env[k] = val
		}
	}
	l, err := BridgeEnv(env)
	if err != nil {
		return nil, err
	}
	l.Training, l.Env = training, layoutEnv
	return l, nil
}

// Check reads l's YAML back as the layout file named file and validates it:
// an imported layout is checked like any other.
func (l *Layout) Check(file string) (text string, res *validate.Result, err error) {
	if text, err = l.YAML(); err != nil {
		return "", nil, err
	}
	ly, d := layout.Parse(file, []byte(text))
	return text, validate.Check(ly, d), nil
}
