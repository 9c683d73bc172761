package suggest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/plan"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

func searchSpec(t *testing.T, src string, margin float64) *plan.Result {
	t.Helper()
	spec, d := layout.ParseSpec("s.yaml", []byte(src))
	require.False(t, d.HasErrors(), "%v", d.Items)
	res, err := plan.Search(&plan.Request{Spec: spec, Est: plan.Model{}, Time: steptime.Select{Dev: steptime.Devices["H100"]}.For(spec),
		GPUMemory: float64(spec.GPUMemory), Margin: margin, Top: 3})
	require.NoError(t, err)
	return res
}

const vlmSpec = "version: 1\ntarget: core\ncluster: {nodes: 2, gpus_per_node: 8, gpu_memory: 80GiB}\nbatch: {micro_batch_size: 1, global_batch_size: 64}\n" +
	"modules:\n  - {name: vision, model: {preset: clip-vit-l-14-336}}\n  - {name: language, model: {preset: llama3-8b}}\n"

// The table keeps within the width it is given: the full table, else the
// narrow one, else a block of lines a candidate.
func TestTableWidth(t *testing.T) {
	res := searchSpec(t, vlmSpec, 0)
	require.NotEmpty(t, res.Candidates)
	var full bytes.Buffer
	require.NoError(t, PrintWidth(&full, "table", res, 0))
	fullWidth := widest(full.String())
	for _, tt := range []struct {
		width  int
		header string
	}{{0, "compute"}, {fullWidth, "compute"}, {fullWidth - 1, "free"}, {60, "#1 "}, {24, "#1 "}} {
		var b bytes.Buffer
		require.NoError(t, PrintWidth(&b, "table", res, tt.width))
		assert.Contains(t, b.String(), tt.header, "width %d", tt.width)
		if tt.width > 0 {
			for _, l := range strings.Split(b.String(), "\n") {
				if !strings.Contains(l, "tp") { // a module's sizes are not cut
					assert.LessOrEqual(t, len([]rune(l)), tt.width, "width %d: %q", tt.width, l)
				}
			}
		}
	}
}

// --headroom: no candidate leaves less free than the margin; one that
// would is a miss that names the headroom.
func TestHeadroom(t *testing.T) {
	free := searchSpec(t, vlmSpec, 0)
	require.NotEmpty(t, free.Candidates)
	least := minFree(&free.Candidates[0].Score)
	kept := searchSpec(t, vlmSpec, least+1)
	for _, c := range kept.Candidates {
		assert.GreaterOrEqual(t, minFree(&c.Score), least+1)
	}
	assert.Equal(t, least+1, kept.HeadroomKept)
	none := searchSpec(t, vlmSpec, 79<<30)
	require.Empty(t, none.Candidates)
	require.NotEmpty(t, none.Misses)
	var blocks []string
	for _, m := range none.Misses {
		blocks = append(blocks, m.Blocks...)
	}
	assert.Contains(t, strings.Join(blocks, "\n"), "headroom kept (--headroom)")
}

// minFree is the least memory a module of s leaves free.
func minFree(s *plan.Score) float64 {
	h := s.Modules[0].HeadroomBytes
	for _, m := range s.Modules {
		h = min(h, m.HeadroomBytes)
	}
	return h
}

// The spec's own blocker comes first, then the misses if any.
func TestPrintMissesReason(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, printMisses(&b, "the spec wants the modules colocated", nil))
	assert.Equal(t, "no layout fits: the spec wants the modules colocated\n", b.String())
	b.Reset()
	require.NoError(t, printMisses(&b, "no ranks are left", []plan.Miss{{Modules: []plan.Choice{{Name: "language", NumRanks: 8}}, Blocks: []string{"x"}}}))
	assert.Equal(t, "no layout fits: no ranks are left\nthe closest misses:\n1. language [0,8) tp0 cp0 pp0 dp0\n   - x\n", b.String())
}
