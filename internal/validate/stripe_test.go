package validate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/grid"
)

func TestFloorSum(t *testing.T) {
	for n := 0; n < 12; n++ {
		for m := 1; m < 10; m++ {
			for a := 0; a < 25; a++ {
				for b := 0; b < 25; b++ {
					want := 0
					for i := range n {
						want += (a*i + b) / m
					}
					require.Equal(t, want, floorSum(n, m, a, b), "n=%d m=%d a=%d b=%d", n, m, a, b)
				}
			}
		}
	}
}

// crossingByEnum is the definition: visit every group of e.
func crossingByEnum(e grid.Enum, gpn int) (count, first int) {
	first = -1
	for i := range e.NumGroups() {
		node := e.Rank(i, 0) / gpn
		for k := 1; k < e.GroupSize(); k++ {
			if e.Rank(i, k)/gpn != node {
				count++
				if first < 0 {
					first = i
				}
				break
			}
		}
	}
	return count, first
}

// The stripes describe exactly the groups internal/grid enumerates (which
// the golden test holds to Megatron's), and their arithmetic answers
// exactly what visiting every group answers, over every small layout.
func TestStripeMatchesGrid(t *testing.T) {
	checked := 0
	for _, tp := range []int{1, 2, 3, 4} {
		for _, gtp := range []int{1, 2, 3} {
			for _, cp := range []int{1, 2, 3, 4} {
				for _, dp := range []int{1, 2, 3, 5} {
					for _, pp := range []int{1, 2} {
						for _, etp := range []int{1, 2, 4} {
							n := tp * gtp * cp * dp * pp
							if n%(etp*pp) != 0 {
								continue
							}
							for _, offset := range []int{0, 1, 3, 8} {
								m, err := grid.NewModule(grid.Spec{
									Name: "m", RankOffset: offset, NumRanks: n,
									TP: tp, GTPRemat: gtp, CP: cp, PP: pp, EP: 1, ExptTP: etp, ExptGTPRemat: 1,
								}, offset+n)
								require.NoError(t, err)
								for _, k := range localKinds {
									e, ok := m.Group(k.kind)
									require.True(t, ok)
									s := k.stripe(m)
									require.Equal(t, e.NumGroups(), s.groups(), k.kind)
									require.Equal(t, e.GroupSize(), s.size, k.kind)
									for i := range e.NumGroups() {
										for j := range e.GroupSize() {
											require.Equal(t, e.Rank(i, j), s.rank(i, j), "%s group %d member %d of %+v", k.kind, i, j, m.Spec)
										}
									}
									for gpn := 1; gpn <= 13; gpn++ {
										wc, wf := crossingByEnum(e, gpn)
										gc, gf := s.crossing(gpn)
										require.Equal(t, [2]int{wc, wf}, [2]int{gc, gf}, "%s of %+v, gpus_per_node %d", k.kind, m.Spec, gpn)
										checked++
									}
								}
								// tp_cp spans nodes exactly when a tp or cp group does.
								tpcp, _ := m.Group("tp_cp")
								tpg, _ := m.Group("tp")
								cpg, _ := m.Group("cp")
								for gpn := 1; gpn <= 13; gpn++ {
									a, _ := crossingByEnum(tpcp, gpn)
									b, _ := crossingByEnum(tpg, gpn)
									c, _ := crossingByEnum(cpg, gpn)
									require.Equal(t, a > 0, b > 0 || c > 0, "%+v gpus_per_node %d", m.Spec, gpn)
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d stripe/gpus_per_node pairs checked", checked)
}

// crossingCases are 2^24-rank modules whose groups straddle nodes, and the
// worst cases of the cp sum (stride and blocks both near the square root
// of the ranks).
var crossingCases = []struct {
	s   stripe
	gpn int
}{
	{stripe{offset: 1, stride: 1, size: 2, blocks: 1 << 23}, 8},          // tp 2, one rank off
	{stripe{offset: 0, stride: 1, size: 1 << 24, blocks: 1}, 8},          // tp 2^24
	{stripe{offset: 0, stride: 1 << 11, size: 2, blocks: 1 << 12}, 3000}, // cp 2 over tp 2048
	{stripe{offset: 5, stride: 1 << 12, size: 2, blocks: 1 << 11}, 6007}, // stride > blocks
	{stripe{offset: 3, stride: 3, size: 5, blocks: 1 << 20}, 1 << 23},    // few crossings, late
}

// The rule answers as a visit of every group would. Its cost, which does
// not grow with the ranks (milliseconds where visiting every group takes
// about 50), is BenchmarkStripeCrossing's to measure, not a timed test's.
func TestStripeCrossingIsCheap(t *testing.T) {
	for _, tt := range crossingCases {
		t.Run(fmt.Sprint(tt.s), func(t *testing.T) {
			count, first := tt.s.crossing(tt.gpn)
			wantCount, wantFirst := 0, -1
			for i := range tt.s.groups() {
				if tt.s.first(i)/tt.gpn != tt.s.rank(i, tt.s.size-1)/tt.gpn {
					wantCount++
					if wantFirst < 0 {
						wantFirst = i
					}
				}
			}
			require.Positive(t, wantCount)
			assert.Equal(t, wantCount, count)
			assert.Equal(t, wantFirst, first)
			// The messages list at most maxShownRanks ranks and nodes.
			assert.LessOrEqual(t, len(showRanks(tt.s, first)), 300)
			assert.LessOrEqual(t, len(showNodes(tt.s, first, tt.gpn)), 300)
		})
	}
}

func BenchmarkStripeCrossing(b *testing.B) {
	for _, tt := range crossingCases {
		b.Run(fmt.Sprint(tt.s), func(b *testing.B) {
			for b.Loop() {
				tt.s.crossing(tt.gpn)
			}
		})
	}
}
