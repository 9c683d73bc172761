package importer

import (
	"fmt"
	"strings"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// BridgeSource reads the MIMO_* variables from the shell script at path, or,
// when path is "", from environ (os.Environ's "NAME=VALUE" entries), into a
// layout.
func BridgeSource(path string, environ []string) (*Layout, error) {
	env := map[string]string{}
	if path != "" {
		f, err := layout.OpenRegular(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if env, err = ScriptEnv(f); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	} else {
		for _, kv := range environ {
			k, val, _ := strings.Cut(kv, "=")
			env[k] = val
		}
	}
	return BridgeEnv(env)
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
