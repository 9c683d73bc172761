package estimate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/estimate"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// A module's segments add up to its total, whatever its terms' signs.
func TestSegmentsAddUp(t *testing.T) {
	t.Parallel()
	for name, res := range cases(t) {
		doc := estimate.Build(res)
		for i := range doc.Modules {
			m := &doc.Modules[i]
			sum := 0.0
			for _, s := range estimate.Segments(m) {
				assert.GreaterOrEqual(t, s.Bytes, 0.0, "%s/%s %s", name, m.Name, s.Term)
				sum += s.Bytes
			}
			assert.InDelta(t, float64(m.TotalBytes), sum, 2, "%s/%s", name, m.Name)
		}
	}
}

var rectBytes = regexp.MustCompile(`<rect class="seg [^"]*"[^>]*data-module="([^"]*)"[^>]*data-bytes="([0-9]+)"`)

// The page has a section per estimated module whose pieces are Segments',
// every module not estimated named, and nothing it would fetch.
func TestPrintHTML(t *testing.T) {
	t.Parallel()
	for name, res := range cases(t) {
		var b bytes.Buffer
		require.NoError(t, estimate.PrintHTML(&b, res, nil), name)
		page := b.String()
		doc := estimate.Build(res)
		sums := map[string]float64{}
		for _, m := range rectBytes.FindAllStringSubmatch(page, -1) {
			v, err := strconv.ParseFloat(m[2], 64)
			require.NoError(t, err)
			sums[m[1]] += v
		}
		for _, m := range doc.Modules {
			assert.InDelta(t, float64(m.TotalBytes), sums[m.Name], float64(len(m.Terms)+2), "%s/%s", name, m.Name)
			assert.Contains(t, page, `<section data-module="`+m.Name+`"`)
		}
		for _, n := range doc.NotEstimated {
			assert.Contains(t, page, `class="none" data-module="`+n+`"`)
		}
		assert.NotContains(t, page, "http://", name)
		assert.NotContains(t, page, "https://", name)
		assert.NotContains(t, page, "src=", name)
	}
}

func TestReadMeasured(t *testing.T) {
	f, err := os.Open(filepath.Join(testutil.RepoRoot(), "testdata", "measured", "h200-x2.json"))
	require.NoError(t, err)
	defer f.Close()
	m, err := estimate.ReadMeasured(f, "mimo-vit-gpt")
	require.NoError(t, err)
	assert.Equal(t, 12826.0*(1<<20), m["vision"].SMIBytes)
	assert.Equal(t, 36884.0*(1<<20), m["language"].SMIBytes)
	_, err = estimate.ReadMeasured(strings.NewReader(`{"configs": {}}`), "x")
	assert.ErrorContains(t, err, `no measured run named "x"`)
	_, err = estimate.ReadMeasured(strings.NewReader(`[`), "x")
	assert.Error(t, err)
}
