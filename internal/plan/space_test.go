package plan

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// TestBoundFactorizationsAreFactorizations: the bounds' enumeration (the
// cores of each divisor, boundFactorizations) lists the same
// factorizations as the descent's, for open, given, closed and bounded
// sizes, with and without a lanes filter and the expert sizes.
func TestBoundFactorizationsAreFactorizations(t *testing.T) {
	modules := []struct {
		name, module string
		gtp          bool
	}{
		{"everything open", "{name: language, num_experts: 8}", false},
		{"gtp open", "{name: language, num_experts: 4}", true},
		{"given tp and pp", "{name: language, tp: 2, pp: 3}", false},
		{"max_tp, given dp and vpp", "{name: language, max_tp: 4, dp: 2, pp: 2, vpp: 2}", false},
		{"given cp, expt_tp, ep", "{name: language, cp: 2, ep: 2, expt_tp: 2, num_experts: 4}", true},
		{"model", "{name: language, model: " + smallLM + "}", false},
	}
	for _, mc := range modules {
		t.Run(mc.name, func(t *testing.T) {
			spec, d := layout.ParseSpec("s.yaml", []byte("version: 1\nworld_size: 96\nmodules:\n  - "+mc.module+"\n"))
			require.False(t, d.HasErrors(), "%v", d.Items)
			sp, c := newSpace(&spec.Modules[0], Options{GTP: mc.gtp}), divCache{}
			listed, most := 0, 96
			if mc.gtp {
				most = 48 // gtp_remat multiplies the sizes
			}
			for n := 1; n <= most; n++ {
				for _, lanes := range []func(dp, gtp int) bool{nil, func(dp, gtp int) bool { return (dp*gtp)%2 == 0 }} {
					for _, base := range []bool{false, true} {
						want := keys(factorizations(c, sp, n, lanes, base, nil))
						got := keys(boundFactorizations(c, sp, n, lanes, base, nil, laneCut{}))
						require.Equal(t, want, got, "%d ranks, lanes %v, base %v", n, lanes != nil, base)
						listed += len(want)
					}
				}
			}
			require.Positive(t, listed)
		})
	}
}

func keys(zs []Sizes) []string {
	var out []string
	for _, z := range zs {
		out = append(out, fmt.Sprint(z))
	}
	slices.Sort(out)
	return out
}

// TestRefusedSizesAreRefused: what the enumerations leave out by the
// model's refusals (refusal.go: learned under the sizes each rule declares
// it reads, and asked of each core's sizes) the model refuses, and they
// leave out some: real models on every number of ranks up to 256 (64 with
// gtp_remat open).
func TestRefusedSizesAreRefused(t *testing.T) {
	spec, d := layout.ParseSpec("s.yaml", []byte("version: 1\ncluster: {nodes: 64, gpus_per_node: 8, gpu_memory: 80GiB}\n"+
		"batch: {micro_batch_size: 1, global_batch_size: 512}\ntraining: {use_distributed_optimizer: true, sequence_parallel: true}\nmodules:\n"+
		"  - {name: vision, model: {preset: clip-vit-l-14-336}}\n  - {name: audio, model: {preset: whisper-large-v3-encoder}}\n"+
		"  - {name: moe, model: {preset: mixtral-8x7b}}\n  - {name: language, model: {preset: llama3-70b}}\n"))
	require.False(t, d.HasErrors(), "%v", d.Items)
	for _, gtp := range []bool{false, true} {
		t.Run(fmt.Sprintf("gtp=%v", gtp), func(t *testing.T) {
			s, err := newSearcher(&Request{Spec: spec, Est: Model{}, Options: Options{GTP: gtp}, Time: steptime.Select{Dev: steptime.Devices["H100"]}.For(spec), GPUMemory: 80 << 30})
			require.NoError(t, err)
			s.explains = false // no misses to keep: the enumeration prunes from the start
			left, most := 0, 256
			switch {
			case testing.Short() && gtp:
				t.Skip("about 3 s: make test runs it")
			case testing.Short():
				most = 96
			case gtp:
				most = 64 // gtp_remat multiplies the sizes
			}
			// The model's verdict, asked once per distinct answer.
			verdict := map[[2]any]bool{}
			refused := func(i, n int, z Sizes) bool {
				m := &spec.Modules[i]
				k := [2]any{i, Model{}.AcceptsKey(m, z)}
				ok, seen := verdict[k]
				if !seen {
					ok = Model{}.Accepts(spec, m, &Choice{Name: m.Name, NumRanks: n, Sizes: z})
					verdict[k] = ok
				}
				return !ok
			}
			for i := range spec.Modules {
				m := &spec.Modules[i]
				for n := 1; n <= most; n++ {
					all := factorizations(s.divs, s.spaces[i], n, nil, s.free[i], nil)
					in := map[Sizes]bool{}
					for _, e := range s.newBoundFact(i, n, nil).es {
						in[e.z] = true
					}
					kept := map[Sizes]bool{}
					for _, e := range s.newFact(i, n, nil).es {
						kept[e.z] = true
					}
					for _, z := range all {
						for _, listed := range []map[Sizes]bool{in, kept} {
							if !listed[z] {
								left++
								require.True(t, refused(i, n, z), "%s on %d ranks: %+v left out", m.Name, n, z)
							}
						}
					}
					for _, listed := range []map[Sizes]bool{in, kept} {
						require.LessOrEqual(t, len(listed), len(all), "%s on %d ranks: a size not in the space", m.Name, n)
					}
				}
			}
			require.Positive(t, left, "nothing left out: the test says nothing")
			t.Logf("%d factorizations left out, each refused", left)
		})
	}
}
