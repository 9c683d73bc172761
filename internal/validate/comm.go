package validate

import (
	"fmt"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// communicators checks what the communicator between an encoder and the
// language model needs, on every target. Non-colocated modules are joined
// by Megatron's BridgeCommunicator
// (megatron/core/pipeline_parallel/bridge_communicator.py), colocated ones
// by ColocatedBridgeCommunicator
// (megatron/core/models/mimo/comm/colocated_communicator.py).
func (c *checker) communicators() {
	t := c.r.Topology
	es := edges(t)
	if len(es) == 0 {
		return // a language module alone has no communicator
	}
	switch t.Mode {
	case topo.NonColocated:
		c.bridge(es)
	case topo.Colocated:
		c.colocated(es)
	}
}

// bridge: BridgeCommunicator elects one leader per data lane on each side
// and pairs them fan-in or fan-out, so the lane counts must divide one
// another; it asserts cp 1 on both grids.
func (c *checker) bridge(es []edge) {
	t := c.r.Topology
	hints := dpHints{}
	v := c.l.TargetVersion
	// Since PR #5720 the destination (the language module) may have cp
	// above 1; the Megatron-LM example and Bridge still want cp 1.
	// PR #7435 wires it into the Megatron-LM example.
	destCP := t.Target == layout.TargetCore && v.Has(upstream.PRDestinationCP) ||
		t.Target == layout.TargetMegatronLM && v.Has(upstream.PRLLMCP)
	where := "on both ends"
	if destCP {
		where = "on its source side, the encoder (cp above 1 on the language module needs Megatron-LM PR #5720, and for target megatron-lm PR #7435, which this target_version has)"
	}
	for i, m := range t.Modules {
		if m.CP == 1 || m.Name == grid.LanguageModule && destCP {
			continue
		}
		c.d.Add(diag.RuleBridgeCPUnsupported, c.lm(i).Pos("cp"), m.Name,
			fmt.Sprintf("set cp to 1 and multiply dp (or tp) by %d to keep the module's %d ranks", m.CP, m.NumRanks),
			"cp is %d, but the BridgeCommunicator that joins non-colocated modules supports only cp 1 %s", m.CP, where)
	}
	for _, e := range es {
		enc, lang := t.Modules[e.enc], t.Modules[e.lang]
		a, b := lanes(enc), lanes(lang)
		if !v.Has(upstream.PRBridgeGTP) {
			// Before PR #6263: one leader per dp replica.
			a, b = enc.DP, lang.DP
			if dividesEither(a, b) {
				continue
			}
			lm := c.lm(e.enc)
			c.d.Add(diag.RuleBridgeLeadersNotDivisible, lm.Pos(dpField(lm)), enc.Name,
				fmt.Sprintf("give %s a dp that is %s (or a target_version since Megatron-LM PR #6263, whose bridge counts gtp_remat lanes)", enc.Name, hints.compatible(b)),
				"%s has dp %d and language dp %d; before Megatron-LM PR #6263 the bridge pairs one leader per dp replica, so one dp must divide the other",
				enc.Name, a, b)
			continue
		}
		if dividesEither(a, b) {
			c.fanIn(e)
			continue
		}
		lm := c.lm(e.enc)
		c.d.Add(diag.RuleBridgeLeadersNotDivisible, lm.Pos(dpField(lm)), enc.Name,
			fmt.Sprintf("give %s a lane count that is %s, e.g. by changing its num_ranks or tp", enc.Name, hints.compatible(b)),
			"%s has %d data lanes (dp %d x gtp_remat %d) and language has %d (dp %d x gtp_remat %d); the bridge pairs one leader per lane, so one count must divide the other",
			enc.Name, a, enc.DP, enc.GTPRemat, b, lang.DP, lang.GTPRemat)
	}
}

// fanIn warns when several encoder dp ranks feed one language lane:
// MimoModel then asserts encoder dp <= language dp*gtp_remat as soon as
// the samples of a micro-batch carry different numbers of modality tokens
// (megatron/core/models/mimo/model/base.py,
// _attach_modality_split_sizes), since the receiving side cannot split
// them back per sample.
func (c *checker) fanIn(e edge) {
	t := c.r.Topology
	enc, lang := t.Modules[e.enc], t.Modules[e.lang]
	if enc.DP <= lanes(lang) {
		return
	}
	lm := c.lm(e.enc)
	c.d.Add(diag.RuleFanInUnevenTokens, lm.Pos(dpField(lm)), enc.Name,
		fmt.Sprintf("fine when every sample has the same number of %s tokens; otherwise give %s a dp of at most %d", enc.Name, enc.Name, lanes(lang)),
		"%s's dp %d is more than language's %d data lanes (dp %d x gtp_remat %d): this fan-in fails at run time (MimoModel asserts encoder dp <= language dp) when samples carry different numbers of %s tokens",
		enc.Name, enc.DP, lanes(lang), lang.DP, lang.GTPRemat, enc.Name)
}

// colocated: ColocatedBridgeCommunicator rejects pp or cp above 1 on either
// grid and DP sizes that do not divide one another. MimoModel builds it
// only from a module_to_grid_map (base.py:68); without one every module
// runs on the global parallel state (base_configs.py:30), each its own
// first and last pipeline stage (role.py:93), the encoders on whole
// samples and only the merged embeddings split by cp (base.py:812, :848).
// So cp is refused only where the modules cannot share the global groups;
// pp always.
func (c *checker) colocated(es []edge) {
	t := c.r.Topology
	hints := dpHints{}
	sizes := make([]ColocatedSizes, len(t.Modules))
	for i, m := range t.Modules {
		sizes[i] = ColocatedSizes{m.TP, m.GTPRemat, m.CP, m.PP, m.DP, m.EP, m.ExptTP, m.ExptGTPRemat}
	}
	cpOK := ColocatedCPOK(sizes, languageIndex(t))
	for i, m := range t.Modules {
		lm := c.lm(i)
		if !ColocatedPPOK(m.PP) {
			c.d.Add(diag.RuleColocatedPPCPUnsupported, lm.Pos("pp"), m.Name,
				"set pp to 1 for colocated modules, or place the modules on disjoint ranks (non-colocated)",
				"%s", ColocatedPPText(m.PP))
		}
		if m.CP != 1 && !cpOK {
			c.d.Add(diag.RuleColocatedPPCPUnsupported, lm.Pos("cp"), m.Name,
				"set cp to 1; or keep the language's cp and give every encoder the language's tp and gtp_remat, cp 1 and dp = language dp x cp (the global groups: no module_to_grid_map, no communicator); or place the modules on disjoint ranks",
				"%s", ColocatedCPText(m.CP))
		}
	}
	for _, e := range es {
		enc, lang := t.Modules[e.enc], t.Modules[e.lang]
		if dividesEither(enc.DP, lang.DP) {
			continue
		}
		lm := c.lm(e.enc)
		c.d.Add(diag.RuleDPNotCompatible, lm.Pos(dpField(lm)), enc.Name,
			fmt.Sprintf("change %s's tp (or the language's) so that its dp is %s", enc.Name, hints.compatible(lang.DP)),
			"dp %d and the language's dp %d do not divide one another; the colocated communicator splits or gathers the batch by their ratio",
			enc.DP, lang.DP)
	}
}
