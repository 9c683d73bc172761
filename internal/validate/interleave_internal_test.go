package validate

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// The upstream lines of the interleaved schedule's micro-batch checks, as
// the fixture names them (diag's catalogue cites the same).
var interleaveLines = map[string]interleaveFault{
	"": interleaveOK,
	"megatron/core/pipeline_parallel/schedules.py:1168": interleaveRange,
	"megatron/core/pipeline_parallel/schedules.py:1180": interleaveRemainder,
}

// TestInterleavedMicrobatchesMatchesMegatron: on every case of
// testdata/interleave-megatron.json (scripts/gen-interleave-fixtures.py
// ran Megatron-LM's get_forward_backward_func and the interleaved
// schedule's checks), mimoplan runs the interleaved schedule where
// upstream picks it, and refuses what upstream refuses, by the same check.
func TestInterleavedMicrobatchesMatchesMegatron(t *testing.T) {
	var f struct {
		Columns []string `json:"columns"`
		Cases   [][]any  `json:"cases"`
	}
	testutil.LoadMegatron(t, "testdata/interleave-megatron.json", &f)
	require.Equal(t, []string{"pp", "vpp", "m", "n", "schedule", "error"}, f.Columns)
	require.Greater(t, len(f.Cases), 1000)
	seen := map[interleaveFault]int{}
	for _, c := range f.Cases {
		pp, vpp, m, n := int(c[0].(float64)), int(c[1].(float64)), int(c[2].(float64)), int(c[3].(float64))
		schedule, line := c[4].(string), c[5].(string)
		interleaved := layout.InterleavedVPP(&layout.Module{VPP: vpp}, pp) > 0
		require.Equal(t, schedule == "forward_backward_pipelining_with_interleaving", interleaved,
			"pp %d vpp %d: upstream runs %s", pp, vpp, schedule)
		if !interleaved {
			continue
		}
		want, ok := interleaveLines[line]
		require.True(t, ok, "an upstream check mimoplan does not know: %s", line)
		require.Equal(t, want, interleaveCheck(pp, m, n), "pp %d vpp %d M %d N %d (upstream: %q)", pp, vpp, m, n, line)
		seen[want]++
	}
	// Every verdict occurs, so the comparison is not vacuous.
	require.Len(t, seen, 3, "%v", seen)
}

// TestInterleavedVPP: the virtual size the interleaved schedule runs
// with, given or from a layout's stages.
func TestInterleavedVPP(t *testing.T) {
	for _, tt := range []struct {
		name       string
		vpp, pp    int
		layoutText string
		want       int
	}{
		{"none", 0, 4, "", 0},
		{"vpp 1 is none", 1, 4, "", 0},
		{"vpp 2", 2, 4, "", 2},
		{"pp 1", 2, 1, "", 0},
		{"layout of 2 pp stages", 0, 4, "Et|t|t|t|t|t|t|tL", 2},
		{"layout of pp stages", 0, 4, "Et|t|t|tL", 0},
		{"layout over vpp", 2, 2, "Et|t|t|t|t|tL", 3},
		{"layout not a multiple of pp", 0, 4, "Et|t|t|t|tL", 0},
		{"unreadable layout", 0, 2, "Ex|tL", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &layout.Module{VPP: tt.vpp}
			m.Split.Layout = tt.layoutText
			require.Equal(t, tt.want, layout.InterleavedVPP(m, tt.pp))
		})
	}
}

// TestVirtualPipelineCallers: the two readers of the vpp a layout implies.
// InterleavedVPP takes a layout whose stages do not divide pp as no
// interleaving, so that only pipeline-layout-invalid reports it;
// moe-comm-overlap-unsupported takes its floor (model.VirtualPipeline).
func TestVirtualPipelineCallers(t *testing.T) {
	moe := model.Config{NumLayers: 8, HiddenSize: 1024, NumAttentionHeads: 8, SeqLength: 4096, NumExperts: 8}
	overlap := model.Training{OverlapMoEExpertParallelComm: true, MoETokenDispatcherType: "alltoall"}
	for _, tt := range []struct {
		name        string
		vpp, pp     int
		layoutText  string
		interleaved int
		moeRefused  bool
	}{
		{"absent", 0, 2, "", 0, true},
		{"vpp given", 2, 2, "", 2, false},
		{"dividing layout", 0, 2, "Ettt|tt|tt|tL", 2, false},
		{"dividing layout of pp stages", 0, 2, "Etttt|ttttL", 0, true},
		{"non-dividing layout, floor 2", 0, 2, "Et|tt|tt|tt|tL", 0, false},
		{"non-dividing layout, floor 1", 0, 2, "Etttt|tt|ttL", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &layout.Module{VPP: tt.vpp}
			m.Split.Layout = tt.layoutText
			require.Equal(t, tt.interleaved, layout.InterleavedVPP(m, tt.pp))
			par := model.Parallel{NumRanks: 8, TP: 1, PP: tt.pp, VPP: tt.vpp, CP: 1, DP: 4, EP: 4, Split: m.Split}
			require.Equal(t, tt.moeRefused, slices.Contains(model.Rules(moe, par, overlap), model.RuleMoECommOverlapUnsupported),
				"%v", model.Rules(moe, par, overlap))
		})
	}
}
