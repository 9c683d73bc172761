package testutil

import (
	"fmt"
	"strings"
)

// LayoutFromBytes turns fuzz bytes into a small layout (1 to 3
// modules, colocated or tiling the world, every parallel size from a
// short menu) that is often valid, so that invariants that hold of valid
// layouts are exercised far more often than by random YAML. The fuzz targets of
// validate and cmd/mimoplan share it.
func LayoutFromBytes(b []byte) string {
	at := func(i int) int {
		if i < len(b) {
			return int(b[i])
		}
		return 0
	}
	pick := func(i int, menu ...int) int { return menu[at(i)%len(menu)] }
	n := 1 + at(0)%3
	colocated := at(1)&1 == 1
	targets := []string{"core", "megatron-lm", "megatron-bridge"}
	var s strings.Builder
	target := targets[at(2)%3]
	fmt.Fprintf(&s, "version: 1\nname: fuzz\ntarget: %s\n", target)
	// Megatron-LM's MIMO example starts only with the distributed
	// optimizer (mimo-needs-distributed-optimizer); mostly give it that.
	if target == "megatron-lm" && at(2)&0x80 == 0 {
		s.WriteString("training: {use_distributed_optimizer: true}\n")
	}
	s.WriteString("modules:\n")
	world, first := 0, 0
	for k := range n {
		o := 3 + 8*k
		name := "language"
		if k < n-1 {
			name = fmt.Sprintf("enc%d", k)
		}
		// Mostly 1s and powers of two, which every target accepts.
		tp, gtp, cp, pp := pick(o, 1, 2, 4, 2, 1, 3), pick(o+1, 1, 1, 1, 2), pick(o+2, 1, 1, 1, 2), pick(o+3, 1, 1, 2, 3)
		ep, etp, egtp, dp := pick(o+4, 1, 1, 2, 4), pick(o+5, 1, 1, 1, 2), pick(o+6, 1, 1, 1, 2), pick(o+7, 1, 2, 4, 2, 3)
		// Megatron-LM's and Megatron-Bridge's examples want more sizes at 1
		// (cp; an encoder's pp and expert sizes; Bridge's GTP): mostly
		// give them that, so that those targets' valid layouts are common.
		if target != "core" && at(o+7)&0x80 == 0 {
			cp = 1
			if name != "language" {
				pp, ep, etp, egtp, gtp = 1, 1, 1, 1, 1
			}
			if target == "megatron-bridge" {
				gtp, egtp = 1, 1
			}
		}
		fmt.Fprintf(&s, "- {name: %s, tp: %d, gtp_remat: %d, cp: %d, pp: %d, ep: %d, expt_tp: %d, expt_gtp_remat: %d", name, tp, gtp, cp, pp, ep, etp, egtp)
		ranks := tp * gtp * cp * pp * dp
		switch {
		case !colocated:
			fmt.Fprintf(&s, ", dp: %d}\n", dp)
			world += ranks
		case k == 0:
			fmt.Fprintf(&s, ", dp: %d, rank_offset: 0}\n", dp)
			first, world = ranks, ranks
		default: // the same span as the first: valid when the sizes divide it
			fmt.Fprintf(&s, ", num_ranks: %d, rank_offset: 0}\n", first)
		}
	}
	// Sometimes two nodes, so that launch plans have several.
	if nodes := 1 + at(27)%2; world%nodes == 0 {
		fmt.Fprintf(&s, "cluster: {nodes: %d, gpus_per_node: %d}\n", nodes, world/nodes)
	} else {
		fmt.Fprintf(&s, "world_size: %d\n", world)
	}
	return s.String()
}
