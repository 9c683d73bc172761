package grid_test

import (
	"testing"

	"github.com/mimoplan/mimoplan/internal/grid"
)

// The scale case of docs/performance.md: 131,072 ranks, a vision encoder of
// 16,384 ranks (tp 4) and a MoE language model of 114,688 ranks (tp 8, cp 2,
// pp 14, ep 64).
var scaleSpecs = []grid.Spec{
	{Name: "vision", RankOffset: 0, NumRanks: 16384, TP: 4, GTPRemat: 1, CP: 1, PP: 1, EP: 1, ExptTP: 1, ExptGTPRemat: 1},
	{Name: "language", RankOffset: 16384, NumRanks: 114688, TP: 8, GTPRemat: 1, CP: 2, PP: 14, EP: 64, ExptTP: 1, ExptGTPRemat: 1},
}

// BenchmarkEnumerate builds both modules' grids and lists every member of
// every group, as render does: 2,646,016 ranks in all.
func BenchmarkEnumerate(b *testing.B) {
	b.ReportAllocs()
	var buf []int
	for b.Loop() {
		sum := 0
		for _, s := range scaleSpecs {
			m, err := grid.NewModule(s, 131072)
			if err != nil {
				b.Fatal(err)
			}
			for _, g := range m.Groups {
				for i := range g.Enum.NumGroups() {
					buf = g.Enum.AppendGroup(buf[:0], i)
					sum += buf[len(buf)-1]
				}
			}
		}
		if sum == 0 {
			b.Fatal("no ranks enumerated")
		}
	}
}

// BenchmarkNewModule measures building the grids and enumerations alone.
func BenchmarkNewModule(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range scaleSpecs {
			if _, err := grid.NewModule(s, 131072); err != nil {
				b.Fatal(err)
			}
		}
	}
}
