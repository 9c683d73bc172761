package suggest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --format html: the page holds each candidate the search kept, a bar per
// module, and memory bars against the spec's GPU; when nothing fits, what
// the text output would say.
func TestPrintHTML(t *testing.T) {
	res := searchSpec(t, vlmSpec, 4<<30)
	require.NotEmpty(t, res.Candidates)
	var b bytes.Buffer
	require.NoError(t, printHTML(&b, res, "vlm.yaml", 80<<30))
	out := b.String()
	assert.Equal(t, len(res.Candidates), strings.Count(out, `<g class="cand-bars"`))
	assert.Equal(t, 2*len(res.Candidates), strings.Count(out, `<g class="bar"`))
	assert.Equal(t, 2*len(res.Candidates), strings.Count(out, `<div class="mem"`))
	assert.Contains(t, out, "4.0 GiB headroom")

	none := searchSpec(t, vlmSpec, 79<<30)
	require.Empty(t, none.Candidates)
	b.Reset()
	require.NoError(t, printHTML(&b, none, "vlm.yaml", 80<<30))
	var text bytes.Buffer
	require.NoError(t, printMisses(&text, none.Reason, none.Misses))
	assert.Contains(t, b.String(), "<h2>No layout fits</h2>")
	assert.Contains(t, b.String(), strings.SplitN(text.String(), "\n", 2)[0])
	assert.NotContains(t, b.String(), `<g class="cand-bars"`)
}
