package rankmap_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/rankmap"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// svgElements lists the elements of an SVG document with their
// attributes.
func svgElements(t *testing.T, doc []byte) []xml.StartElement {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var out []xml.StartElement
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err, "the SVG must be well-formed XML")
		if se, ok := tok.(xml.StartElement); ok {
			out = append(out, se)
		}
	}
}

func attr(se xml.StartElement, name string) (string, bool) {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

func svg(t *testing.T, layout, kind string) []byte {
	t.Helper()
	m, err := rankmap.New(load(t, layout).Topology, kind)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, m.SVG(&b))
	return b.Bytes()
}

func TestSVG(t *testing.T) {
	doc := svg(t, "layouts/three-module-4node.yaml", "")
	var ranks []string
	modules := map[string]int{}
	boxes := 0
	for _, se := range svgElements(t, doc) {
		if r, ok := attr(se, "data-rank"); ok {
			ranks = append(ranks, r)
			m, _ := attr(se, "data-module")
			modules[m]++
		}
		if stroke, ok := attr(se, "stroke-width"); ok && stroke == "2.5" {
			boxes++
		}
	}
	assert.Len(t, ranks, 32, "a cell per rank")
	assert.Equal(t, map[string]int{"vision": 8, "audio": 8, "language": 16}, modules)
	// tp boxes: vision tp 2 (4 blocks), audio tp 1 (8 single ranks),
	// language tp 4 (4 blocks of 4, each within a node's row).
	assert.Equal(t, 4+8+4, boxes)

	// --group dp: language's dp groups (tp 4, pp 2, dp 2) are pairs 4 ranks
	// apart, so no two neighbours share one: a box per rank, 8 groups.
	doc = svg(t, "layouts/three-module-4node.yaml", "dp")
	titles := regexp.MustCompile(`<title>dp group (\d+) of language</title>`).FindAllStringSubmatch(string(doc), -1)
	assert.Len(t, titles, 16)
	groups := map[string]bool{}
	for _, m := range titles {
		groups[m[1]] = true
	}
	assert.Len(t, groups, 8)

	_, err := rankmap.New(load(t, "layouts/three-module-4node.yaml").Topology, "tensor")
	assert.Error(t, err)
}

// Bridge leaders follow BridgeCommunicator.get_leader_rank: per data lane
// (the grid enumerated over every dim but dp and gtp_remat) the last rank
// on the encoder (source) side and the first on the language side.
func TestLeadersAndEmbeddings(t *testing.T) {
	m, err := rankmap.New(load(t, "layouts/three-module-4node.yaml").Topology, "")
	require.NoError(t, err)
	var leaders, embd []int
	for r := range 32 {
		for _, s := range m.Slots(r) {
			if s.Leader {
				leaders = append(leaders, r)
			}
			if s.Embd {
				embd = append(embd, r)
			}
		}
	}
	// vision tp 2 dp 4 on [0, 8): lanes {0,1} {2,3} {4,5} {6,7}, last of each;
	// audio tp 1 dp 8: every rank a lane; language tp 4 pp 2 dp 2 on
	// [16, 32): lanes {16-19, 24-27} and {20-23, 28-31}, first of each.
	assert.Equal(t, []int{1, 3, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20}, leaders)
	// language's embedding ranks: the first and last stage of each pp group.
	assert.Equal(t, []int{16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31}, embd)

	colo, err := rankmap.New(load(t, "layouts/colocated-vlm-8gpu.yaml").Topology, "")
	require.NoError(t, err)
	for r := range 8 {
		for _, s := range colo.Slots(r) {
			assert.False(t, s.Leader, "colocated modules have no bridge")
		}
	}
}

// Large worlds get a cell per node; both forms stay small.
func TestAggregated(t *testing.T) {
	doc := svg(t, "layouts/scale-131072.yaml", "")
	assert.Less(t, len(doc), 5<<20)
	nodes := map[string]bool{}
	for _, se := range svgElements(t, doc) {
		if n, ok := attr(se, "data-node"); ok {
			nodes[n] = true
		}
		_, rank := attr(se, "data-rank")
		assert.False(t, rank)
	}
	assert.Len(t, nodes, 16384)

	res := load(t, "layouts/scale-131072.yaml")
	m, err := rankmap.New(res.Topology, "")
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, m.HTML(&b, rankmap.Page{Notes: res.Diags.Notes, Diags: res.Diags.Items}))
	page := b.String()
	assert.Less(t, len(page), 5<<20)
	assert.Equal(t, 16384, strings.Count(page, "data-node="))
	assert.Contains(t, page, `<li class="warning" data-module="language"`, "the page lists validate's warnings")
	assert.Contains(t, page, "[group-crosses-node]")
}

// The page is one file: nothing is fetched.
func TestSelfContained(t *testing.T) {
	res := load(t, "layouts/nemotron-vlm-8gpu.yaml")
	m, err := rankmap.New(res.Topology, "")
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, m.HTML(&b, rankmap.Page{}))
	page := b.String()
	for _, bad := range []string{"src=", "href=", "@import", "url(", "http://", "https://", "fetch("} {
		assert.NotContains(t, page, bad)
	}
	assert.Equal(t, 8, strings.Count(page, "data-rank="))
}

// A layout's name is free text: the page and the picture show it, never
// run it.
func TestNameIsInert(t *testing.T) {
	src := "version: 1\nname: \"</script><script>alert(1)</script>&<b>\"\nworld_size: 4\nmodules: [{name: language, num_ranks: 4, tp: 2}]\n"
	l, d := layout.Parse("t.yaml", []byte(src))
	res := validate.Check(l, d)
	require.NotNil(t, res.Topology)
	m, err := rankmap.New(res.Topology, "")
	require.NoError(t, err)
	var page, pic bytes.Buffer
	require.NoError(t, m.HTML(&page, rankmap.Page{}))
	require.NoError(t, m.SVG(&pic))
	assert.NotContains(t, page.String(), "<script>alert")
	assert.Equal(t, 2, strings.Count(page.String(), "<script"), "the data and the page's own script")
	assert.Contains(t, page.String(), "&lt;/script&gt;&lt;script&gt;alert(1)")
	svgElements(t, pic.Bytes()) // well-formed
	assert.NotContains(t, pic.String(), "<script")
}
