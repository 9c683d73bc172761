package english

import "testing"

func TestClosest(t *testing.T) {
	for _, c := range []struct {
		s     string
		cands []string
		want  string
	}{
		{"--llm-tpp", []string{"--llm-pp", "--llm-tp"}, "--llm-tp"},
		{"selectiv", []string{"full", "selective"}, "selective"},
		{"abc", []string{"xyz"}, ""},
		{"abcd", []string{"abxy", "abcx"}, "abcx"},
		{"ab", []string{"ba", "ab"}, "ab"},
		{string(make([]byte, 65)), []string{string(make([]byte, 65))}, ""},
	} {
		if got := Closest(c.s, c.cands); got != c.want {
			t.Errorf("Closest(%q, %q) = %q, want %q", c.s, c.cands, got, c.want)
		}
	}
}
