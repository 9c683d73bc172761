package render_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// countingWriter discards output but counts it, so the benchmark can report
// the size of what a render produces.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var scaleLayout = filepath.Join(testutil.RepoRoot(), "layouts", "scale-131072.yaml")

// load is what render does first: read, parse and check the layout. The
// scale layout breaks a runtime rule (cp 2 across the bridge) but passes
// the core rules, which is all render needs to print its groups.
func load(b *testing.B) *validate.Topology {
	res, err := validate.Load(scaleLayout)
	if err != nil {
		b.Fatalf("load: %v", err)
	}
	if res.Topology == nil {
		b.Fatalf("the core rules fail: %+v", res.Diags.Items)
	}
	return res.Topology
}

// BenchmarkRenderJSON is the whole of `mimoplan render --format json` on
// the 131,072-rank layout: read, parse, validate, enumerate and stream.
func BenchmarkRenderJSON(b *testing.B) {
	b.ReportAllocs()
	var size int64
	for b.Loop() {
		t := load(b)
		w := &countingWriter{}
		if err := render.JSON(w, t); err != nil {
			b.Fatal(err)
		}
		size = w.n
	}
	b.ReportMetric(float64(size)/1e6, "MB/op-output")
}

// BenchmarkRenderTable is the default table output of the same layout.
func BenchmarkRenderTable(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := render.Render(io.Discard, load(b), render.Options{Format: "table"}); err != nil {
			b.Fatal(err)
		}
	}
}
