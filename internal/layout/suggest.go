package layout

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
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

// suggest returns the candidate closest to s by edit distance, if it is
// close enough to be a likely typo.
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	if len(s) > 64 {
		return ""
	}
	for _, c := range candidates {
		if d := distance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
