package english

// Closest returns the candidate nearest to s by edit distance when it is
// near enough to be a likely typo (at most 2 edits), else "". Of equally
// near candidates the one sharing the longest prefix with s wins (a typo
// at the end: --llm-tpp is --llm-tp, not --llm-pp), then the first.
func Closest(s string, candidates []string) string {
	best, bestD, bestP := "", 3, -1
	if len(s) > 64 {
		return ""
	}
	for _, c := range candidates {
		d := distance(s, c)
		if d > bestD || d == 3 {
			continue
		}
		if p := prefix(s, c); d < bestD || p > bestP {
			best, bestD, bestP = c, d, p
		}
	}
	return best
}

func prefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
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
