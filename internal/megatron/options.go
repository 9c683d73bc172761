package megatron

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mimoplan/mimoplan/internal/english"
)

// options.json is written by scripts/gen-megatron-options.py: every option
// string that examples/mimo/pretrain_mimo.py's parser accepts at one
// Megatron-LM commit (megatron/training/arguments.py, the dataclass fields
// its ArgumentGroupFactory turns into flags, and extra_args_provider's
// own), and whether it takes a value.
//
//go:embed options.json
var optionsJSON []byte

type optionFile struct {
	Commit  string            `json:"megatron_lm_commit"`
	Grid    []string          `json:"grid_options"`
	Options map[string]string `json:"options"`
	// ConfigFields are the fields of the config dataclasses that
	// Megatron-Bridge holds the training settings in.
	ConfigFields map[string][]string `json:"config_fields"`
}

var options = func() optionFile {
	var f optionFile
	if err := json.Unmarshal(optionsJSON, &f); err != nil {
		panic(fmt.Sprintf("megatron: options.json: %v", err))
	}
	return f
}()

// OptionsCommit is the Megatron-LM commit the option list was read at.
func OptionsCommit() string { return options.Commit }

// Option reports whether Megatron-LM's MIMO example takes name, an option
// string such as --num-layers, under the grid names g, and whether it
// takes a value. The grid names of the other generation are unknown, as
// args.py has one set or the other.
func Option(name string, g Grid) (takesValue, ok bool) {
	if slices.Contains(g.All(), name) {
		return name != g.LLMOnly && name != g.EncoderDDPOverlap, true
	}
	if slices.Contains(options.Grid, name) {
		return false, false // a plain grid name, which g is not
	}
	kind, ok := options.Options[name]
	return kind == "value", ok
}

// Closest returns the option string of the example nearest to name (under
// the grid names g), "" when none is a likely typo of it.
func Closest(name string, g Grid) string {
	cands := g.All()
	for o := range options.Options {
		if !slices.Contains(options.Grid, o) {
			cands = append(cands, o)
		}
	}
	slices.Sort(cands) // a stable answer among equally near ones
	return english.Closest(name, cands)
}

// Unknown is the error of an option string the example does not take.
func Unknown(name string, g Grid) error {
	msg := fmt.Sprintf("%s is not an argument of Megatron-LM's pretrain_mimo.py", name)
	if c := Closest(name, g); c != "" {
		return fmt.Errorf("%s: did you mean %s?", msg, c)
	}
	return fmt.Errorf("%s (arguments.py and the example's own at Megatron-LM %.12s)", msg, options.Commit)
}
