package plan

import (
	"os"
	"testing"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

func benchSpec(b *testing.B, path string) *layout.Layout {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	spec, d := layout.ParseSpec(path, data)
	if d.HasErrors() {
		b.Fatalf("%s: %v", path, d.Items)
	}
	return spec
}

// BenchmarkSuggest runs the default search (best 5) on the specs of
// testdata/suggest; docs/performance.md has the figures.
func BenchmarkSuggest(b *testing.B) {
	specs := []string{"vlm-16gpu", "llama3-70b-64gpu", "mixtral-64gpu", "three-64gpu", "three-128gpu", "three-1024gpu", "three-16384gpu", "three-16384gpu-gbs4096"}
	for _, name := range specs {
		spec := benchSpec(b, "../../testdata/suggest/"+name+".yaml")
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := Search(&Request{Spec: spec, Est: Model{},
					Time: steptime.Select{Dev: steptime.Devices["H100"]}.For(spec), GPUMemory: float64(spec.GPUMemory), Top: 5})
				if err != nil || len(res.Candidates) == 0 {
					b.Fatalf("%s: %v, %d candidates", name, err, len(res.Candidates))
				}
			}
		})
	}
}

// BenchmarkSuggestCases runs the searches docs/performance.md names as slow
// cases: --gtp (gtp_remat opened) on the three-module specs, and a spec on
// which nothing fits (--headroom 95%), with the CLI's default headroom (DefaultHeadroom)
// otherwise. MaxNodes bounds a run that does not finish.
func BenchmarkSuggestCases(b *testing.B) {
	cases := []struct {
		name, spec string
		gtp        bool
		headroom   float64
	}{
		{"gtp-three-64gpu", "three-64gpu", true, DefaultHeadroom},
		{"gtp-three-1024gpu", "three-1024gpu", true, DefaultHeadroom},
		{"nofit-three-1024gpu", "three-1024gpu", false, 0.95},
		{"nofit-three-16384gpu", "three-16384gpu", false, 0.95},
		{"three-16384gpu-gbs4096", "three-16384gpu-gbs4096", false, DefaultHeadroom},
	}
	for _, c := range cases {
		spec := benchSpec(b, "../../testdata/suggest/"+c.spec+".yaml")
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				mem := float64(spec.GPUMemory)
				res, err := Search(&Request{Spec: spec, Options: Options{GTP: c.gtp}, Est: Model{},
					Time: steptime.Select{Dev: steptime.Devices["H100"]}.For(spec), GPUMemory: mem, Margin: c.headroom * mem, Top: 5})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Nodes), "nodes/op")
				b.ReportMetric(float64(res.Checked), "checked/op")
			}
		})
	}
}
