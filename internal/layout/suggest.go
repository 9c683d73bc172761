package layout

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/english"
)

// didYouMean is hint, led by the closest of choices when the scalar v is
// a likely typo of one (megatron_lm, Megatron-LM, RMSnorm).
func didYouMean(v *yaml.Node, choices []string, hint string) string {
	if v.Kind != yaml.ScalarNode {
		return hint
	}
	s := suggest(v.Value, choices)
	if s == "" {
		s = suggest(strings.ToLower(v.Value), choices)
	}
	if s == "" {
		for _, c := range choices {
			if strings.EqualFold(c, v.Value) {
				s = c
			}
		}
	}
	if s == "" {
		return hint
	}
	return fmt.Sprintf("did you mean %q? (%s)", s, hint)
}

// suggest is english.Closest: the candidate closest to s by edit
// distance, if close enough to be a likely typo (the one did-you-mean
// helper of the repository).
func suggest(s string, candidates []string) string { return english.Closest(s, candidates) }
