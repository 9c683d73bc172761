package validate

import (
	"fmt"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// targetSizes checks what the chosen runtime supports beyond
// Megatron-core, of the modules' sizes: it runs over the modules whose
// sizes are sound, whatever else is wrong.
func (c *checker) targetSizes() {
	switch c.l.Target {
	case layout.TargetMegatronLM:
		c.megatronLM()
	case layout.TargetMegatronBridge:
		c.megatronBridge()
	}
}

// targetPlacement checks what the chosen runtime supports of the
// modules' placement, once the topology is built.
func (c *checker) targetPlacement() {
	switch c.l.Target {
	case layout.TargetMegatronLM:
		c.megatronLMPlacement()
	case layout.TargetMegatronBridge:
		c.colocationUnsupported("Megatron-Bridge",
			"place the modules on disjoint ranks that tile the world (heterogeneous deployment)")
	}
}

// sizeCheck is one parallel size a rule wants at 1.
type sizeCheck struct {
	field string
	size  int
}

// colocationUnsupported reports a colocated layout of several modules,
// which the target cannot run.
func (c *checker) colocationUnsupported(runtime, hint string) {
	t := c.r.Topology
	if t.Mode != topo.Colocated || len(t.Modules) < 2 {
		return
	}
	m := c.lm(1)
	c.d.Add(diag.RuleColocatedUnsupported, m.Pos("rank_offset"), m.Name, hint,
		"every module spans the same ranks [%d, %d) (colocated), which %s cannot run", m.RankOffset, m.End(), runtime)
}

// megatronLM checks the single-encoder example of Megatron-LM
// (examples/mimo/pretrain_mimo.py, examples/mimo/training/args.py): the
// sizes of the modules whose sizes are sound.
func (c *checker) megatronLM() {
	if !c.hasLanguage() {
		return
	}
	v := c.l.TargetVersion
	if !v.Has(upstream.PRArgs) {
		c.d.Add(diag.RuleTargetVersionTooOld, c.l.Pos("target_version"), "",
			"give a target_version since 2026-06-23 (Megatron-LM PR #5375), or target core",
			"target_version %s predates Megatron-LM PR #5375, which gave the MIMO example its grid arguments: there is no launch to check or write", v)
		return
	}
	if v.Has(upstream.PRDistOpt) && (c.l.Training == nil || !c.l.Training.UseDistributedOptimizer) {
		pos := c.l.Pos("training.use_distributed_optimizer")
		if !c.l.Given("training.use_distributed_optimizer") {
			pos = c.l.Pos("target")
		}
		c.d.Add(diag.RuleMIMONeedsDistributedOptimizer, pos, "",
			"set training.use_distributed_optimizer: true",
			"Megatron-LM's MIMO example (pretrain_mimo.py) refuses to start without the distributed optimizer (training.use_distributed_optimizer)")
	}
	for i, m := range c.sized {
		if v.Has(upstream.PRGTP) || m == nil || m.Name != grid.LanguageModule {
			continue
		}
		lm := c.lm(i)
		for _, s := range []sizeCheck{{"gtp_remat", m.GTPRemat}, {"expt_gtp_remat", m.ExptGTPRemat}} {
			if s.size > 1 {
				c.d.Add(diag.RuleGTPNeedsNewerVersion, lm.Pos(s.field), m.Name,
					fmt.Sprintf("set %s to 1, or give a target_version since 2026-08-18 (PR #6570)", s.field),
					"%s is %d, but at target_version %s Megatron-LM's MIMO example has no GTP (it came with PR #6570)", s.field, s.size, v)
			}
		}
	}
	c.mimoVPP("Megatron-LM's MIMO example")
	c.mimoSplit()
	c.p2pOverlap()
	done := c.seen()
	encoder := false
	for _, m := range c.l.Modules {
		encoder = encoder || (m.Name != "" && m.Name != grid.LanguageModule)
	}
	for i, m := range c.sized {
		if m == nil || m.CP == 1 {
			continue
		}
		if m.Name == grid.LanguageModule && encoder && v.Has(upstream.PRLLMCP) {
			continue // PR #7435: language cp beside a non-colocated encoder
		}
		pos := c.lm(i).Pos("cp")
		if done.hasAt(pos, m.Name, diag.RuleBridgeCPUnsupported, diag.RuleColocatedPPCPUnsupported) {
			continue
		}
		c.d.Add(diag.RuleCPUnsupported, pos, m.Name,
			fmt.Sprintf("set cp to 1 and multiply dp (or tp) by %d to keep the module's %d ranks", m.CP, m.NumRanks),
			"cp is %d, but Megatron-LM's MIMO example supports only cp 1 (--llm-cp/--encoder-cp)", m.CP)
	}
	// Several encoders is a matter of names alone.
	var encs []int
	for i, m := range c.l.Modules {
		if m.Name != "" && m.Name != grid.LanguageModule {
			encs = append(encs, i)
		}
	}
	for k, i := range encs[min(1, len(encs)):] {
		m := c.lm(i)
		c.d.Add(diag.RuleTooManyEncoders, m.Pos("name"), m.Name,
			fmt.Sprintf("keep one encoder (here %s) for target megatron-lm, or use target core or megatron-bridge for several", c.l.Modules[encs[0]].Name),
			"Megatron-LM's MIMO example runs one encoder (--encoder-*), but this is encoder number %d", k+2)
	}
	for _, i := range encs {
		m, lm := c.sized[i], c.lm(i)
		if m == nil {
			continue
		}
		// args.py builds the encoder grid from --mimo-encoder-tp and
		// --mimo-encoder-dp alone; its GTP arguments shard the language
		// module only (the encoder stays replicated, PR #6570).
		for _, s := range []sizeCheck{{"pp", m.PP}, {"ep", m.EP}, {"expt_tp", m.ExptTP}, {"gtp_remat", m.GTPRemat}, {"expt_gtp_remat", m.ExptGTPRemat}} {
			pos := lm.Pos(s.field)
			if s.size == 1 || done.hasAt(pos, m.Name, diag.RuleColocatedPPCPUnsupported) {
				continue
			}
			c.d.Add(diag.RuleEncoderParallelismUnsupported, pos, m.Name,
				fmt.Sprintf("set the encoder's %s to 1 (and keep its ranks with tp or dp): Megatron-LM's example builds the encoder grid from tp and dp alone", s.field),
				"%s is %d, but Megatron-LM's MIMO example runs the encoder with %s 1", s.field, s.size, s.field)
		}
	}
}

// megatronLMPlacement checks where Megatron-LM's example puts the modules.
func (c *checker) megatronLMPlacement() {
	t := c.r.Topology
	if languageIndex(t) < 0 {
		return
	}
	if len(t.Modules) == 1 {
		m, lm := t.Modules[0], c.lm(0)
		if m.RankOffset != 0 || m.NumRanks != t.WorldSize {
			field := "num_ranks"
			if m.RankOffset != 0 {
				field = "rank_offset"
			}
			c.d.Add(diag.RuleLLMOnlyNotWholeWorld, lm.Pos(field), m.Name,
				fmt.Sprintf("set rank_offset to 0 and num_ranks to %d: with --llm-only the language grid covers WORLD_SIZE", t.WorldSize),
				"a language module alone (--llm-only) spans [%d, %d), not the whole world [0, %d)", m.RankOffset, m.RankOffset+m.NumRanks, t.WorldSize)
		}
		return
	}
	c.colocationUnsupported("Megatron-LM's MIMO example",
		"give the encoder ranks [0, N) and the language module the rest (--llm-offset N); or use target core for Megatron-core's colocated communicator")
	var encs []int
	for i, m := range t.Modules {
		if m.Name != grid.LanguageModule {
			encs = append(encs, i)
		}
	}
	for _, i := range encs {
		if t.Modules[i].RankOffset == 0 {
			return
		}
	}
	e := c.lm(encs[0])
	c.d.Add(diag.RuleEncoderNotFirst, e.Pos("rank_offset"), e.Name,
		fmt.Sprintf("give %s rank_offset 0 and place the language module after it (--llm-offset %d)", e.Name, e.NumRanks),
		"the encoder starts at rank %d, but Megatron-LM's MIMO example always places the encoder span at rank 0", e.RankOffset)
}

// hasLanguage reports whether a module is named language.
func (c *checker) hasLanguage() bool {
	for _, m := range c.l.Modules {
		if m.Name == grid.LanguageModule {
			return true
		}
	}
	return false
}

// megatronBridge checks MegatronMIMOParallelismConfig.finalize of
// NVIDIA-NeMo/Megatron-Bridge, over the modules whose sizes are sound.
func (c *checker) megatronBridge() {
	v := c.l.TargetVersion
	if !v.Has(upstream.PRBridgeTraining) {
		c.d.Add(diag.RuleTargetVersionTooOld, c.l.Pos("target_version"), "",
			"give a target_version since 2026-04-10 (Megatron-Bridge PR #2869), or target core",
			"target_version %s predates Megatron-Bridge PR #2869, which brought MIMO training on per-module grids: there is no launch to check or write", v)
		return
	}
	c.mimoVPP("Megatron-Bridge's MIMO training")
	expert := v.Has(upstream.PRBridgeExpert)
	for i, m := range c.sized {
		if m == nil {
			continue
		}
		lm := c.lm(i)
		if m.TP&(m.TP-1) != 0 {
			lo := 1
			for lo*2 < m.TP {
				lo *= 2
			}
			c.d.Add(diag.RuleTPNotPowerOfTwo, lm.Pos("tp"), m.Name,
				fmt.Sprintf("use tp %d or %d", lo, lo*2),
				"tp is %d, but Megatron-Bridge needs a power of two (1, 2, 4, 8, ...) for cross-module communication", m.TP)
		}
		for _, s := range []sizeCheck{{"gtp_remat", m.GTPRemat}, {"expt_gtp_remat", m.ExptGTPRemat}} {
			if s.size == 1 {
				continue
			}
			c.d.Add(diag.RuleGTPUnsupported, lm.Pos(s.field), m.Name,
				fmt.Sprintf("set %s to 1: Megatron-Bridge's ModuleParallelismConfig has no GTP size", s.field),
				"%s is %d, but Megatron-Bridge supports only %s 1", s.field, s.size, s.field)
		}
		if !expert {
			for _, s := range []sizeCheck{{"ep", m.EP}, {"expt_tp", m.ExptTP}} {
				if s.size > 1 {
					c.d.Add(diag.RuleBridgeExpertNeedsNewerVersion, lm.Pos(s.field), m.Name,
						fmt.Sprintf("set %s to 1, or give a target_version since 2026-07-13 (Megatron-Bridge PR #4485)", s.field),
						"%s is %d, but at target_version %s Megatron-Bridge's ModuleParallelismConfig has no expert parallelism of its own (it came with PR #4485)", s.field, s.size, v)
				}
			}
			continue
		}
		if m.Name == grid.LanguageModule {
			continue
		}
		for _, s := range []sizeCheck{{"ep", m.EP}, {"expt_tp", m.ExptTP}} {
			if s.size == 1 {
				continue
			}
			c.d.Add(diag.RuleEncoderNotDense, lm.Pos(s.field), m.Name,
				fmt.Sprintf("set %s to 1: only the language module may be MoE", s.field),
				"%s is %d, but Megatron-Bridge requires encoders to stay dense (ep 1, expt_tp 1)", s.field, s.size)
		}
	}
	c.bridgeDP()
	if !v.Has(upstream.PRBridgeEncoderDP) {
		c.bridgeEncoderDP()
	}
}

// bridgeEncoderDP reports each encoder whose dp is below the language
// module's, which Megatron-Bridge refused from PR #2869 until PR #4071.
func (c *checker) bridgeEncoderDP() {
	lang := c.sizedLanguage()
	if lang < 0 {
		return
	}
	l := c.sized[lang]
	for i, m := range c.sized {
		if m == nil || i == lang || m.DP >= l.DP {
			continue
		}
		lm := c.lm(i)
		c.d.Add(diag.RuleBridgeEncoderDPBelowLanguageDP, lm.Pos(dpField(lm)), m.Name,
			fmt.Sprintf("give %s a dp of at least %d (more ranks or a smaller tp), or a target_version since 2026-06-02 (Megatron-Bridge PR #4071)", m.Name, l.DP),
			"dp %d is below the language dp %d, which Megatron-Bridge refuses at target_version %s (encoder dp must be >= language dp until PR #4071)", m.DP, l.DP, c.l.TargetVersion)
	}
}

// bridgeDP reports each module whose dp does not divide, or is not divided
// by, the dp of an earlier module; once per module, so that many modules
// cannot multiply into a flood of diagnostics.
func (c *checker) bridgeDP() {
	done := c.seen()
	hints := dpHints{}
	type first struct{ dp, index int }
	var dps []first // each distinct dp so far, with its first module
	known := map[int]bool{}
	for j, b := range c.sized {
		if b == nil {
			continue
		}
		for _, a := range dps {
			if dividesEither(a.dp, b.DP) {
				continue
			}
			// The encoder -> language pair is its communicator rule's to
			// report; once is enough.
			other := c.sized[a.index]
			enc := ""
			switch grid.LanguageModule {
			case other.Name:
				enc = b.Name
			case b.Name:
				enc = other.Name
			}
			if enc != "" && (done.has(diag.RuleBridgeLeadersNotDivisible, enc) || done.has(diag.RuleDPNotCompatible, enc)) {
				continue
			}
			lm := c.lm(j)
			c.d.Add(diag.RuleDPNotCompatible, lm.Pos(dpField(lm)), b.Name,
				fmt.Sprintf("change %s's num_ranks or tp so that its dp is %s", b.Name, hints.compatible(a.dp)),
				"dp %d and %s's dp %d do not divide one another, which Megatron-Bridge requires of every pair of modules", b.DP, other.Name, a.dp)
			break
		}
		if !known[b.DP] {
			known[b.DP] = true
			dps = append(dps, first{b.DP, j})
		}
	}
}
