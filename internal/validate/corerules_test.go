package validate_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/validate"
)

type hit struct {
	Rule         string
	Line, Column int
	Module       string
}

func check(src string) *validate.Result {
	l, d := layout.Parse("core.yaml", []byte(src))
	return validate.Check(l, d)
}

func hits(r *validate.Result) []hit {
	var out []hit
	for _, d := range r.Diags.Items {
		out = append(out, hit{d.Rule, d.Line, d.Column, d.Module})
	}
	return out
}

func TestCoreRules(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []hit
		mode topo.Mode // where the layout is valid: an invalid one has no topology
	}{
		{"non-colocated ok", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, tp: 2}\n", nil, topo.NonColocated},
		{"colocated ok", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 8, tp: 2}\n- {name: language, num_ranks: 8, rank_offset: 0, tp: 4}\n", nil, topo.Colocated},
		{"missing language", "version: 1\nworld_size: 4\nmodules:\n- {name: vision, num_ranks: 4}\n",
			[]hit{{"missing-language-module", 4, 1, ""}}, ""},
		{"dense not divisible", "version: 1\nworld_size: 6\nmodules:\n- name: language\n  num_ranks: 6\n  tp: 4\n",
			[]hit{{"dense-not-divisible", 5, 14, "language"}}, ""},
		{"expert not divisible", "version: 1\nworld_size: 6\nmodules:\n- name: language\n  num_ranks: 6\n  ep: 4\n",
			[]hit{{"expert-not-divisible", 6, 7, "language"}}, ""},
		{"experts not divisible", "version: 1\nworld_size: 4\nmodules:\n- name: language\n  num_ranks: 4\n  ep: 4\n  num_experts: 6\n",
			[]hit{{"experts-not-divisible", 7, 16, "language"}}, ""},
		{"experts divisible", "version: 1\nworld_size: 4\nmodules:\n- name: language\n  num_ranks: 4\n  ep: 4\n  num_experts: 8\n", nil, topo.Colocated},
		{"span out of world", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: language, num_ranks: 4, rank_offset: 6}\n",
			[]hit{{"span-out-of-world", 5, 47, "language"}}, ""},
		{"default offset out of world", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 6}\n- {name: language, num_ranks: 4}\n",
			[]hit{{"span-out-of-world", 5, 31, "language"}}, ""},
		{"span overlap", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 6}\n- {name: language, num_ranks: 4, rank_offset: 4}\n",
			[]hit{{"span-overlap", 5, 47, "language"}}, ""},
		{"world gap", "version: 1\nworld_size: 12\nmodules:\n- {name: vision, num_ranks: 4, rank_offset: 0}\n- {name: language, num_ranks: 4, rank_offset: 6}\n",
			[]hit{{"world-gap", 2, 13, ""}}, ""},
		{"everything at once", "version: 1\nworld_size: 16\nmodules:\n- {name: vision, num_ranks: 6, tp: 4}\n- {name: audio, num_ranks: 4, rank_offset: 8, ep: 3}\n",
			[]hit{{"world-gap", 2, 13, ""}, {"missing-language-module", 4, 1, ""}, {"dense-not-divisible", 4, 29, "vision"}, {"expert-not-divisible", 5, 51, "audio"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := check(tt.src)
			assert.Equal(t, tt.want, hits(r))
			if len(tt.want) == 0 {
				require.NotNil(t, r.Topology)
				assert.Equal(t, tt.mode, r.Topology.Mode) // an invalid layout has no topology, nor mode
				assert.True(t, r.Valid(false))
			} else {
				assert.Nil(t, r.Topology)
				assert.False(t, r.Valid(false))
			}
		})
	}
}

func TestSpanOverlapMessages(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"overlap names the first earlier module", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: audio, num_ranks: 4}\n- {name: language, num_ranks: 6, rank_offset: 2}\n",
			[]string{"span [2, 8) overlaps module \"vision\" at [0, 4) without being identical to it"}},
		{"identical spans among others", "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4}\n- {name: audio, num_ranks: 4, rank_offset: 0}\n- {name: language, num_ranks: 4}\n",
			[]string{"span [0, 4) is module \"vision\"'s too, but other modules have other spans: modules share their ranks only when all of them do (colocated)"}},
		{"one diagnostic per module", "version: 1\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 8}\n- {name: a, num_ranks: 1, rank_offset: 0}\n- {name: b, num_ranks: 2, rank_offset: 0}\n- {name: c, num_ranks: 3, rank_offset: 0}\n",
			[]string{
				"span [0, 1) overlaps module \"language\" at [0, 8) without being identical to it",
				"span [0, 2) overlaps module \"language\" at [0, 8) without being identical to it",
				"span [0, 3) overlaps module \"language\" at [0, 8) without being identical to it",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range check(tt.src).Diags.Items {
				if d.Rule == "span-overlap" {
					got = append(got, d.Message)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestWorldGapNamesRanges(t *testing.T) {
	r := check("version: 1\nworld_size: 16\nmodules:\n- {name: vision, num_ranks: 4, rank_offset: 1}\n- {name: language, num_ranks: 4, rank_offset: 8}\n")
	require.Len(t, r.Diags.Items, 1)
	assert.Equal(t, "ranks 0, 5-7, 12-15 of the world [0, 16) belong to no module", r.Diags.Items[0].Message)
}

func TestSummary(t *testing.T) {
	r := check("version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4}\n")
	assert.Equal(t, "core.yaml: valid: non_colocated, 8 ranks, target core: vision [0, 4), language [4, 8)", r.Summary(false))
	r = check("version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 3, tp: 2}\n")
	assert.Equal(t, "core.yaml: invalid: 3 errors", r.Summary(false))

	// Many modules: the line stays short; nine are all named.
	modules := func(n int) string {
		src := "version: 1\nworld_size: " + itoa(n+1) + "\nmodules:\n- {name: language, num_ranks: 1}\n"
		for i := range n {
			src += "- {name: m" + itoa(i) + ", num_ranks: 1}\n"
		}
		return src
	}
	assert.Equal(t, "core.yaml: valid: non_colocated, 10 ranks, target core: language [0, 1), m0 [1, 2), m1 [2, 3), m2 [3, 4), m3 [4, 5), m4 [5, 6), m5 [6, 7), m6 [7, 8), and 2 more", check(modules(9)).Summary(false))
	assert.True(t, strings.HasSuffix(check(modules(8)).Summary(false), "m6 [7, 8), m7 [8, 9)"))
}
