package render_test

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// --rank's json and yaml are streamed (a rank's groups may hold millions
// of ranks); the bytes are those encoding/json and yaml.v3 write for the
// same document, for every layout, rank and selection, and for module
// names that YAML must quote.
func TestRankStreamIsEncoders(t *testing.T) {
	t.Parallel()
	var srcs []string
	for _, f := range testutil.Layouts(t, "*.yaml") {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		srcs = append(srcs, string(src))
	}
	srcs = append(srcs, `version: 1
world_size: 8
modules:
  - {name: "null", num_ranks: 2, tp: 2}
  - {name: "true", num_ranks: 2}
  - {name: "yes", num_ranks: 2}
  - {name: language, rank_offset: 6, num_ranks: 2, pp: 2}
`)
	for _, src := range srcs {
		tp := topology(t, src)
		world := tp.WorldSize
		if world > 1<<12 {
			continue // the same code at 131,072 ranks; TestRank covers the shape
		}
		for _, rank := range []int{0, 1, 2, 4, world / 3, world / 2, world - 1} {
			for _, o := range []render.Options{
				{Rank: rank, HasRank: true},
				{Rank: rank, HasRank: true, Groups: []string{"tp", "dp", "embd"}},
				{Rank: rank, HasRank: true, Groups: []string{"pos_embd"}},
				{Rank: rank, HasRank: true, Modules: []string{"language"}},
			} {
				for _, format := range []string{"json", "yaml"} {
					o.Format = format
					var oracle, streamed bytes.Buffer
					require.NoError(t, render.RenderRankOracle(&oracle, tp, o))
					require.NoError(t, render.Render(&streamed, tp, o))
					require.Equal(t, oracle.String(), streamed.String(), "%s rank %d %v", tp.Name, rank, o)
					if format == "json" {
						assert.True(t, json.Valid(streamed.Bytes()))
					} else {
						assert.NotNil(t, yamlData(t, streamed.Bytes()))
					}
				}
			}
		}
	}
}

// yamlData is a YAML document's data with its mappings' order kept:
// a mapping is a list of key and value pairs.
func yamlData(t *testing.T, b []byte) any {
	t.Helper()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(b, &doc))
	require.Len(t, doc.Content, 1)
	var walk func(n *yaml.Node) any
	walk = func(n *yaml.Node) any {
		switch n.Kind {
		case yaml.MappingNode:
			pairs := [][2]any{}
			for i := 0; i < len(n.Content); i += 2 {
				pairs = append(pairs, [2]any{n.Content[i].Value, walk(n.Content[i+1])})
			}
			return pairs
		case yaml.SequenceNode:
			items := []any{}
			for _, c := range n.Content {
				items = append(items, walk(c))
			}
			return items
		}
		var v any
		require.NoError(t, n.Decode(&v))
		return v
	}
	return walk(doc.Content[0])
}

// --rank --full streams a rank's groups: on a 1,048,576-rank module its
// groups hold 32,768 to 262,144 members (29 MB of table), and rendering
// them allocates a bounded amount, not the members' text (the old
// tablewriter path held every member as a string: 1.8 GB and minutes at
// 16,777,216 ranks).
func TestRankFullStreams(t *testing.T) {
	tp := topology(t, "version: 1\nworld_size: 1048576\nmodules:\n  - {name: language, num_ranks: 1048576, tp: 8, pp: 4}\n")
	for _, format := range []string{"text", "markdown"} {
		var n countingWriter
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		require.NoError(t, render.Render(&n, tp, render.Options{Format: format, Rank: 5, HasRank: true, Full: true}))
		runtime.ReadMemStats(&after)
		assert.Greater(t, n.n, int64(25<<20), format)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "%s: allocated while writing %d bytes", format, n.n)
	}
}
