package render_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// --rank's json and yaml are built whole by encoding/json and yaml.v3, or
// streamed when the rank's groups are long: both ways must print the same
// data, for every layout, rank and selection.
func TestRankPlainAndStreamedAgree(t *testing.T) {
	t.Parallel()
	for _, f := range testutil.Layouts(t, "*.yaml") {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		tp := topology(t, string(src))
		world := tp.WorldSize
		if world > 1<<12 {
			continue // the same code at 131,072 ranks; TestRank covers the shape
		}
		for _, rank := range []int{0, 1, world / 3, world / 2, world - 1} {
			for _, o := range []render.Options{
				{Rank: rank, HasRank: true},
				{Rank: rank, HasRank: true, Groups: []string{"tp", "dp", "embd"}},
				{Rank: rank, HasRank: true, Groups: []string{"pos_embd"}},
			} {
				for _, format := range []string{"json", "yaml"} {
					o.Format = format
					var plain, streamed bytes.Buffer
					require.NoError(t, render.RenderRankVia(&plain, tp, o, true))
					require.NoError(t, render.RenderRankVia(&streamed, tp, o, false))
					if format == "json" {
						// The same bytes but the spaces the stream puts in
						// lists: keys, order and values alike.
						var compact bytes.Buffer
						require.NoError(t, json.Compact(&compact, streamed.Bytes()))
						assert.Equal(t, compact.String()+"\n", plain.String(), "%s rank %d groups %v", f, rank, o.Groups)
						continue
					}
					assert.Equal(t, yamlData(t, streamed.Bytes()), yamlData(t, plain.Bytes()), "%s rank %d groups %v", f, rank, o.Groups)
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
