package validate

import (
	"fmt"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/english"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// batch checks the batch sizes, when the layout gives them, the way the
// target runtime reads them, over the modules whose sizes are sound.
func (c *checker) batch() {
	b := c.l.Batch
	if b == nil || b.MicroBatchSize <= 0 {
		return
	}
	if c.l.Target == layout.TargetMegatronBridge {
		c.bridgeBatch()
		return
	}
	if lang := c.sizedLanguage(); lang >= 0 {
		c.laneBatch(lang)
	}
}

// laneBatch: for core and megatron-lm, micro_batch_size is per language
// data lane. One micro-batch step takes mbs*lanes samples; each encoder
// splits them over its dp ranks (examples/mimo/training/data.py), and the
// global batch is a whole number of steps (examples/mimo/training/args.py).
func (c *checker) laneBatch(lang int) {
	b := c.l.Batch
	lm := c.sized[lang]
	mbs, n := b.MicroBatchSize, lanes(lm)
	step := mbs * n // at most 2^31 * 2^24: no overflow
	c.fact("language has %s (dp %d x gtp_remat %d): a micro-batch step takes %s (micro_batch_size %d per lane)",
		english.Plural(n, "data lane"), lm.DP, lm.GTPRemat, english.Plural(step, "sample"), mbs)
	shown := 0
	for _, e := range c.sizedEdges() {
		enc := c.sized[e.enc]
		if step%enc.DP != 0 {
			need := enc.DP / gcd(n, enc.DP)
			c.d.Add(diag.RuleFanoutNotDivisible, c.l.Pos("batch.micro_batch_size"), enc.Name,
				fmt.Sprintf("make micro_batch_size a multiple of %d, or give %s a dp that divides %d", need, enc.Name, step),
				"each micro-batch step's %d samples (micro_batch_size %d x %d language lanes) do not split evenly over %s's dp %d",
				step, mbs, n, enc.Name, enc.DP)
			continue
		}
		if shown++; shown <= maxSummaryModules {
			c.fact("%s micro-batch: %s per dp rank (%d / dp %d)", enc.Name, english.Plural(step/enc.DP, "sample"), step, enc.DP)
		}
	}
	if shown > maxSummaryModules {
		c.fact("and %d more encoders' micro-batches", shown-maxSummaryModules)
	}
	gbs := b.GlobalBatchSize
	if gbs == 0 && c.l.Target == layout.TargetMegatronLM && lm.GTPRemat > 1 {
		// pretrain_mimo.py runs validate_args with the language grid as the
		// world, so data_parallel_size is the language dp without GTP.
		c.d.Add(diag.RuleGlobalBatchDefaultNotDivisible, c.l.Pos("batch"), "",
			fmt.Sprintf("set global_batch_size to a multiple of %d (micro_batch_size %d x dp %d x gtp_remat %d)", step, mbs, lm.DP, lm.GTPRemat),
			"no global_batch_size: Megatron-LM sets it to micro_batch_size*dp = %d*%d = %d, and then asserts that the eval batch (the same by default) is divisible by micro_batch_size*dp*gtp_remat = %d, which fails with language gtp_remat %d",
			mbs, lm.DP, mbs*lm.DP, step, lm.GTPRemat)
	}
	if gbs == 0 {
		return
	}
	if !wholeSteps(gbs, step) {
		c.d.Add(diag.RuleGlobalBatchNotDivisible, c.l.Pos("batch.global_batch_size"), "",
			fmt.Sprintf("make global_batch_size a multiple of %d (%s)", step, multiples(step, gbs)),
			"global_batch_size %d is not a whole number of micro-batch steps of %d samples (micro_batch_size %d x %d language lanes)",
			gbs, step, mbs, n)
		return
	}
	c.fact("%d micro-batches per global batch (%d / %d)", gbs/step, gbs, step)
	c.interleaving(gbs/step, step)
}

// bridgeBatch: for megatron-bridge, micro_batch_size is the global MIMO
// micro-batch, sliced by each module's dp; num_microbatches is gbs/mbs
// (megatron_mimo_parallel_utils.validate_data_loader_contract), and
// global_batch_size must be set (training/config.py).
func (c *checker) bridgeBatch() {
	b := c.l.Batch
	mbs, gbs := b.MicroBatchSize, b.GlobalBatchSize
	if gbs == 0 {
		c.d.Add(diag.RuleGlobalBatchRequired, c.l.Pos("batch"), "",
			fmt.Sprintf("add global_batch_size under batch, a multiple of micro_batch_size %d", mbs),
			"Megatron-Bridge asserts that train.global_batch_size is set, but batch has no global_batch_size")
	}
	var mods []*grid.Module
	for _, m := range c.sized {
		if m != nil {
			mods = append(mods, m)
		}
	}
	all := 1 // lcm of every dp, for hints
	for _, m := range mods {
		all = lcmCapped(all, m.DP)
	}
	var shares []string
	for _, m := range mods {
		if mbs%m.DP != 0 {
			c.d.Add(diag.RuleMicroBatchNotDivisible, c.l.Pos("batch.micro_batch_size"), m.Name,
				fmt.Sprintf("make micro_batch_size a multiple of %d (the least common multiple of every module's dp)", all),
				"micro_batch_size %d (the global MIMO micro-batch) does not split evenly over dp %d", mbs, m.DP)
			continue
		}
		shares = append(shares, fmt.Sprintf("%s %d (dp %d)", m.Name, mbs/m.DP, m.DP))
	}
	if n := len(shares); n > maxSummaryModules+1 {
		shares = append(shares[:maxSummaryModules], fmt.Sprintf("and %d more", n-maxSummaryModules))
	}
	if len(shares) > 0 {
		c.fact("global micro-batch %d: samples per dp rank: %s", mbs, strings.Join(shares, ", "))
	}
	if gbs == 0 {
		return
	}
	var why []string
	if gbs%mbs != 0 {
		why = append(why, fmt.Sprintf("micro_batch_size %d (num_microbatches = %d/%d is not whole)", mbs, gbs, mbs))
	}
	for _, m := range mods {
		if gbs%m.DP != 0 {
			why = append(why, fmt.Sprintf("%s's dp %d", m.Name, m.DP))
		}
	}
	if len(why) > 0 {
		want := lcmCapped(mbs, all)
		c.d.Add(diag.RuleGlobalBatchNotDivisible, c.l.Pos("batch.global_batch_size"), "",
			fmt.Sprintf("make global_batch_size a multiple of %d (%s)", want, multiples(want, gbs)),
			"global_batch_size %d is not divisible by %s", gbs, strings.Join(why, " or by "))
		return
	}
	c.fact("num_microbatches %d (global_batch_size %d / micro_batch_size %d)", gbs/mbs, gbs, mbs)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// lcmCapped is the least common multiple, held at 1<<40 so that a hint can
// never overflow.
func lcmCapped(a, b int) int {
	const limit = 1 << 40
	q := a / gcd(a, b)
	if q > limit/b {
		return limit
	}
	return q * b
}
