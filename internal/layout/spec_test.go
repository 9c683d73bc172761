package layout

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSpecOpenSizesAndConstraints(t *testing.T) {
	src := "version: 1\ncluster: {nodes: 2, gpus_per_node: 8}\ncolocated: false\nmodules:\n" +
		"  - name: vision\n    max_tp: 2\n    align: node\n" +
		"  - name: language\n    tp: 4\n    num_ranks: 8\n"
	l, d := ParseSpec("s.yaml", []byte(src))
	require.Empty(t, d.Items)
	require.NotNil(t, l.Colocated)
	assert.False(t, *l.Colocated)
	v, lang := l.Modules[0], l.Modules[1]
	assert.False(t, v.Broken)
	assert.Equal(t, 0, v.NumRanks, "open num_ranks stays 0")
	assert.Equal(t, 2, v.MaxTP)
	assert.True(t, v.AlignNode)
	assert.False(t, v.Given("tp"))
	assert.False(t, lang.Broken, "a module after an open one is not broken")
	assert.Equal(t, 0, lang.RankOffset, "offsets are the planner's")
	assert.True(t, lang.Given("tp"))
	assert.Equal(t, 4, lang.TP)
	assert.Equal(t, 8, lang.NumRanks)
}

func TestParseSpecBadConstraints(t *testing.T) {
	src := "version: 1\nworld_size: 8\ncolocated: yes please\nmodules:\n" +
		"  - name: language\n    max_tp: 0\n    align: rack\n"
	_, d := ParseSpec("s.yaml", []byte(src))
	var got []string
	for _, x := range d.Items {
		got = append(got, x.Rule)
		assert.NotZero(t, x.Line)
	}
	assert.Equal(t, []string{"invalid-value", "invalid-value", "invalid-value"}, got)
}

func TestConstraintKeysAreNotLayoutKeys(t *testing.T) {
	src := "version: 1\nworld_size: 8\ncolocated: true\nmodules:\n  - name: language\n    num_ranks: 8\n    max_tp: 2\n"
	_, d := Parse("l.yaml", []byte(src))
	require.Len(t, d.Items, 2)
	for _, x := range d.Items {
		assert.Equal(t, "unknown-field", x.Rule)
	}
}
