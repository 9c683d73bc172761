package limit_test

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/limit"
	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

var (
	quoted  = regexp.MustCompile(`"[^"]*"`)
	integer = regexp.MustCompile(`[0-9]+`)
)

// integers lists the integers of a render output, leaving out quoted
// strings (names) and, in CSV, the module name column.
func integers(b []byte) []string {
	return integer.FindAllString(string(quoted.ReplaceAll(b, nil)), -1)
}

// TestSameIntegers checks the yardstick's claim: it writes the integers
// that render writes, in the same order. The only integer render writes
// besides is the format's version.
func TestSameIntegers(t *testing.T) {
	layouts := []string{
		testutil.Layout("nemotron-vlm-8gpu.yaml"),
		testutil.Layout("colocated-vlm-8gpu.yaml"),
		testutil.Layout("three-module-4node.yaml"),
	}
	for _, f := range append(layouts, testutil.GoldenLayouts(t, "case-000*.yaml")...) {
		res, err := validate.Load(f)
		require.NoError(t, err)
		require.NotNil(t, res.Topology, f)
		top := res.Topology
		for _, m := range top.Modules {
			require.NotRegexp(t, `[0-9]`, m.Name, "a module name with digits would be counted")
		}
		for _, format := range []string{"json", "yaml", "csv"} {
			for _, byRank := range []bool{false, true} {
				var got, want bytes.Buffer
				n, err := limit.Write(&got, top, format, byRank)
				require.NoError(t, err)
				assert.Equal(t, int64(got.Len()), n)
				require.NoError(t, render.Render(&want, top, render.Options{Format: format, ByRank: byRank}))
				w := integers(want.Bytes())
				if !byRank && format != "csv" {
					require.Equal(t, "1", w[0], "version")
					w = w[1:]
				}
				assert.Equal(t, w, integer.FindAllString(got.String(), -1), "%s %s by rank %v", filepath.Base(f), format, byRank)
			}
		}
	}
}

func TestUnknownFormat(t *testing.T) {
	res, err := validate.Load(testutil.Layout("nemotron-vlm-8gpu.yaml"))
	require.NoError(t, err)
	_, err = limit.Write(&bytes.Buffer{}, res.Topology, "text", false)
	assert.ErrorContains(t, err, `no limit for format "text"`)
}
