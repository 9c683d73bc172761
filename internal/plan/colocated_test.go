package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// twoModules is a spec of two modules whose memory grows with their
// sizes, on nodes of 8 GPUs of gpu_memory mem, placed as placement says
// ("" for either), each with the keys vision and lang add; heavy gives the
// encoder the larger model, so that it, not the language module, has the
// most FLOPs.
type twoModules struct {
	placement, vision, lang string
	heavy                   bool
	nodes                   int
}

func (c twoModules) spec(t *testing.T, mem string) *layout.Layout {
	t.Helper()
	mbs := "2"
	if strings.Contains(c.lang, "cp: 2") {
		mbs = "8" // an encoder's micro-batch, 8 x the language lanes over its dp, then exceeds its least
	}
	small := "{num_layers: 8, hidden_size: 1024, num_attention_heads: 8, seq_length: 1024}"
	big := "{num_layers: 8, hidden_size: 2048, num_attention_heads: 16, num_query_groups: 4, seq_length: 2048, vocab_size: 32000}"
	if c.heavy {
		small, big = "{num_layers: 16, hidden_size: 2048, num_attention_heads: 16, seq_length: 2048}", small
	}
	text := fmt.Sprintf("version: 1\ncluster: {nodes: %d, gpus_per_node: 8, gpu_memory: %s}\nbatch: {micro_batch_size: %s, global_batch_size: 64}\n%s",
		max(c.nodes, 1), mem, mbs, c.placement) +
		"modules:\n  - {name: vision, " + c.vision + "model: " + small + "}\n" +
		"  - {name: language, " + c.lang + "model: " + big + "}\n"
	spec, d := layout.ParseSpec("s.yaml", []byte(text))
	require.False(t, d.HasErrors(), "%v", d.Items)
	return spec
}

// colocatedBytes is validate's own estimate of each colocated module: the
// figure sharedOverExact prunes with, checked on every pair of the two
// modules' factorizations (gtp_remat open, so that the language module's
// lanes vary) against validate.CheckWith's estimates.
func TestColocatedBytesIsValidates(t *testing.T) {
	spec := twoModules{placement: "colocated: true\n"}.spec(t, "80GiB")
	s, err := newSearcher(&Request{Spec: spec, Options: Options{GTP: true}, Est: Model{}, Time: steptime.Select{Dev: steptime.Devices["H100"]}.For(spec),
		GPUMemory: float64(spec.GPUMemory), Top: 1})
	require.NoError(t, err)
	s.colocated = true
	w := spec.WorldSize
	estimates := 0
	for _, le := range s.fact(s.lang, w).es {
		for _, ve := range s.fact(0, w).es {
			s.cur[s.lang] = Choice{Name: "language", NumRanks: w, Sizes: le.z}
			s.cur[0] = Choice{Name: "vision", NumRanks: w, Sizes: ve.z}
			res := validate.CheckWith(s.layout(), &diag.List{File: spec.File}, s.grids)
			for _, e := range res.Estimates {
				b, ok := s.colocatedBytes(e.Index)
				require.True(t, ok)
				require.Equal(t, e.Estimate.TotalBytes(), b, "%s beside %+v", e.Name, s.cur)
				estimates++
			}
		}
	}
	require.Greater(t, estimates, 1000)
}

// The shortcuts that leave validate out, or a placement, where that
// would change nothing but misses dropped or nodes counted
// (sharedOverExact's exact colocated memory, memoryRefusesRest, the
// spent sizes placements' walk steps over) keep the result: candidates,
// misses and reason are those of the search without them. The memories
// run from nothing fitting to everything fitting; with cp 2 the expert
// sizes of a colocated module add colocated-pp-cp-unsupported to some of
// a refused candidate's variants, which are then misses of their own.
func TestShortcutsKeepResult(t *testing.T) {
	colocated := "colocated: true\n"
	cases := []struct {
		name string
		twoModules
		mems []string
	}{
		{"either placement", twoModules{}, []string{"5500MiB", "7GiB"}},
		{"either placement, 16 GPUs", twoModules{nodes: 2}, []string{"4GiB", "5GiB", "7GiB"}},
		// The encoder has the more FLOPs: the walk refuses its sizes and
		// the language module's apart. Nothing fits: the walk is whole.
		{"either placement, 16 GPUs, heavy encoder", twoModules{nodes: 2, heavy: true}, []string{"7GiB"}},
		{"colocated", twoModules{placement: colocated}, []string{"5500MiB", "5700MiB", "6GiB", "8GiB", "12GiB"}},
		{"colocated, language cp 2", twoModules{placement: colocated, lang: "cp: 2, "}, []string{"10GiB"}},
		// One colocated candidate and its expert sizes: refused by memory
		// together, and some of its variants by colocated-pp-cp-unsupported
		// too (a second miss, which the shortcut must not drop).
		{"colocated, few sizes, cp 2", twoModules{placement: colocated, vision: "tp: 2, pp: 1, cp: 1, gtp_remat: 2, ", lang: "tp: 2, pp: 1, cp: 2, gtp_remat: 2, "},
			[]string{"10500MiB", "12GiB"}},
	}
	for _, tc := range cases {
		if testing.Short() && tc.heavy {
			continue // 4 s of CPU: make test runs it
		}
		for _, mem := range tc.mems {
			spec := tc.spec(t, mem)
			for _, headroom := range []float64{0, 0.15} {
				for _, top := range []int{1, 5} {
					name := fmt.Sprintf("%s/%s/headroom=%g/top=%d", tc.name, mem, headroom, top)
					req := &Request{Spec: spec, Options: Options{GTP: true}, Est: Model{}, Time: steptime.Select{Dev: steptime.Devices["H100"]}.For(spec),
						GPUMemory: float64(spec.GPUMemory), Margin: headroom * float64(spec.GPUMemory), Top: top}
					requireShortcutsKeep(t, name, req)
				}
			}
		}
	}
}

// The encoder is the module over memory (weightyEncoder): on 1 GPU, where
// the language module's FLOPs put it first, none of its factorizations
// fits, which says nothing of the language module on 1 GPU (the spent
// sizes are the language module's alone). At 4800MiB nothing fits and
// --all's misses are those of the whole walk; at 5500MiB the language
// module on 1 GPU is in the kept set.
func TestShortcutsKeepResultEncoderOverMemory(t *testing.T) {
	for _, mem := range []string{"4800MiB", "5500MiB"} {
		spec, d := layout.ParseSpec("s.yaml", []byte(weightyEncoder(mem)))
		require.False(t, d.HasErrors(), "%v", d.Items)
		for _, headroom := range []float64{0, 0.15} {
			for _, top := range []int{0, 1, 5} {
				req := &Request{Spec: spec, Est: Model{}, Time: steptime.Select{Dev: steptime.Devices["H100"]}.For(spec),
					GPUMemory: float64(spec.GPUMemory), Margin: headroom * float64(spec.GPUMemory), Top: top}
				requireShortcutsKeep(t, fmt.Sprintf("%s/headroom=%g/top=%d", mem, headroom, top), req)
			}
		}
	}
}

// requireShortcutsKeep runs req with the shortcuts and without them
// (exhaustive) and requires the same candidates, misses and reason.
func requireShortcutsKeep(t *testing.T, name string, req *Request) {
	t.Helper()
	got, err := Search(req)
	require.NoError(t, err, name)
	req.exhaustive = true
	want, err := Search(req)
	require.NoError(t, err, name)
	t.Logf("%s: %d candidates, %d misses, validate asked %d times (%d without the shortcuts)", name, len(want.Candidates), len(want.Misses), got.Checked, want.Checked)
	require.Equal(t, want.Candidates, got.Candidates, name)
	require.Equal(t, want.Misses, got.Misses, name)
	require.Equal(t, want.Reason, got.Reason, name)
}
