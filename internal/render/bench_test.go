package render_test

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/limit"
	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// countingWriter discards output but counts it, so the benchmark can report
// the size of what a render produces.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var scaleLayout = testutil.Layout("scale-131072.yaml")

// loadFile reads, parses and checks a layout for a benchmark.
func loadFile(b *testing.B, path string) *topo.Topology {
	res, err := validate.Load(path)
	if err != nil {
		b.Fatalf("load: %v", err)
	}
	if res.Topology == nil {
		b.Fatalf("the core rules fail: %+v", res.Diags.Items)
	}
	return res.Topology
}

// BenchmarkStream compares each machine form of render with the
// format-and-write limit of the same integers (package limit) at 131,072,
// 1,048,576 and 16,777,216 ranks; the layout is loaded beforehand, so
// both sides measure formatting and writing alone. The largest world runs
// only json and csv, whose output is 3-5 GB. cpu-ns/op is the process's
// CPU time per run, steadier than ns/op on a shared machine.
func BenchmarkStream(b *testing.B) {
	all := []string{"json", "csv", "yaml", "by-rank-json", "by-rank-csv", "by-rank-yaml"}
	worlds := []struct {
		ranks string
		path  string
		forms []string
	}{
		{"131072", scaleLayout, all},
		{"1048576", filepath.Join(testutil.RepoRoot(), "testdata", "scale", "scale-1048576.yaml"), all},
		{"16777216", filepath.Join(testutil.RepoRoot(), "testdata", "scale", "scale-16777216.yaml"), []string{"json", "csv"}},
	}
	for _, wd := range worlds {
		t := loadFile(b, wd.path)
		for _, form := range wd.forms {
			format, byRank := strings.CutPrefix(form, "by-rank-")
			b.Run(wd.ranks+"/"+form+"/render", func(b *testing.B) {
				b.ReportAllocs()
				var w countingWriter
				cpu := cpuTime()
				for b.Loop() {
					w.n = 0
					if err := render.Render(&w, t, render.Options{Format: format, ByRank: byRank}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
				b.SetBytes(w.n)
			})
			b.Run(wd.ranks+"/"+form+"/limit", func(b *testing.B) {
				b.ReportAllocs()
				var n int64
				cpu := cpuTime()
				for b.Loop() {
					var err error
					if n, err = limit.Write(io.Discard, t, format, byRank); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
				b.SetBytes(n)
			})
		}
	}
}

// load is what render does first: read, parse and check the layout.
func load(b *testing.B) *topo.Topology {
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
		if err := render.Render(io.Discard, load(b), render.Options{Format: "text"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderFullTable is `render --full` of the same layout: a table
// row for every group of every kind (106 MB), streamed.
func BenchmarkRenderFullTable(b *testing.B) {
	benchTable(b, render.Options{Format: "text", Full: true})
}

// BenchmarkRenderByRankFullTable is `render --by rank --full`: a table row
// for each of the 131,072 ranks.
func BenchmarkRenderByRankFullTable(b *testing.B) {
	benchTable(b, render.Options{Format: "text", Full: true, ByRank: true})
}

func benchTable(b *testing.B, o render.Options) {
	b.ReportAllocs()
	var size int64
	for b.Loop() {
		w := &countingWriter{}
		if err := render.Render(w, load(b), o); err != nil {
			b.Fatal(err)
		}
		size = w.n
	}
	b.ReportMetric(float64(size)/1e6, "MB/op-output")
}
