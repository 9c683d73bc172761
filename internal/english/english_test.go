package english

import "testing"

func TestPlural(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "error", "0 errors"},
		{1, "GPU", "1 GPU"},
		{2, "data lane", "2 data lanes"},
		{-1, "node", "-1 nodes"},
	} {
		if got := Plural(tt.n, tt.noun); got != tt.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}
