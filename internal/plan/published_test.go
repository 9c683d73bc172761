package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// publishedOutcome is what suggest makes of one published run: whether
// the published layout is accepted (valid and fits), its step, and where
// it stands beside suggest's best on the open spec.
type publishedOutcome struct {
	id               string
	accepted         bool
	blocks           string
	step, best       float64
	rank             int // 1-based in the top 5; 0: not there
	agrees           bool
	bestSizes, sizes string
	measured         float64 // the published step, seconds per global batch
}

// sizesOf is c's sizes as the comparison reads them: a size the row's
// source does not give (vpp in the SC21 and README tables) is "?".
func sizesOf(c Choice, r testutil.CalRow) string {
	vpp := fmt.Sprint(max(1, c.VPP))
	if !r.IsPublished("vpp") {
		vpp = "?"
	}
	return fmt.Sprintf("tp%d pp%d vpp%s cp%d ep%d etp%d dp%d", c.TP, c.PP, vpp, c.CP, c.EP, c.ExptTP, c.DP)
}

func searchPublished(t *testing.T, f *testutil.Calibration, r testutil.CalRow) publishedOutcome {
	o := publishedOutcome{id: r.ID}
	dev := steptime.Devices[r.GPU]
	mem := fmt.Sprintf("%dMiB", int64(dev.MemBytes)>>20)
	sel := steptime.Select{Dev: dev}
	var measured float64
	run := func(open bool, top int, margin float64) *Result {
		text, err := f.Layout(r, open, mem)
		if err != nil {
			t.Fatal(err)
		}
		spec, d := layout.ParseSpec(r.ID+".yaml", text)
		if d.HasErrors() {
			t.Fatalf("%s: %v", r.ID, d.Items)
		}
		cfg := spec.Modules[0].Model.Config.Resolve()
		if measured, err = r.MeasuredStep(cfg.SeqLength, cfg.NumLayers, cfg.HiddenSize, model.PaddedVocabSize(cfg.VocabSize, cfg.MakeVocabSizeDivisibleBy, 1)); err != nil {
			t.Fatal(err)
		}
		res, err := Search(&Request{Spec: spec, Est: Model{}, Time: sel.For(spec),
			GPUMemory: float64(spec.GPUMemory), Margin: margin * float64(spec.GPUMemory), Top: top})
		if err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		return res
	}
	z := r.Sizes
	var want Choice
	want.TP, want.PP, want.VPP, want.CP, want.EP, want.ExptTP, want.DP = z["tp"], z["pp"], z["vpp"], z["cp"], z["ep"], z["expt_tp"], r.DP()
	o.sizes = sizesOf(want, r)
	fixed := run(false, 1, 0)
	if len(fixed.Candidates) > 0 {
		o.accepted, o.step = true, fixed.Candidates[0].Score.StepSeconds
	} else if len(fixed.Misses) > 0 {
		var ids []string
		for _, b := range fixed.Misses[0].Blocks {
			ids = append(ids, blockID(b))
		}
		o.blocks = strings.Join(ids, "; ")
	}
	open := run(true, 5, DefaultHeadroom)
	if len(open.Candidates) > 0 {
		o.best = open.Candidates[0].Score.StepSeconds
		o.bestSizes = sizesOf(open.Candidates[0].Modules[0], r)
	}
	for i, c := range open.Candidates {
		if sizesOf(c.Modules[0], r) == o.sizes && o.rank == 0 {
			o.rank = i + 1
		}
	}
	o.agrees = o.accepted && (o.rank > 0 || o.step <= 1.05*o.best)
	o.measured = measured
	return o
}

// For every published run of testdata/calibration, suggest on the open
// spec (same cluster, batch, training and model, and suggest's default
// headroom, as a user runs it) against the published layout: accepted (as
// validate judges it, without headroom), and within 5% of suggest's best
// or in its top 5 (the target: 80% of the runs). A size the
// source does not give is left open in the published layout and not
// compared. The figures are reported and held.
func TestPublishedLayoutsRanked(t *testing.T) {
	if testing.Short() {
		t.Skip("a search per published run, up to 6,144 GPUs")
	}
	f := testutil.LoadCalibration(t)
	var b, brief strings.Builder
	brief.WriteString("| row | published layout | predicted s | measured s | predicted / measured | suggest's best | its step s | agrees |\n|---|---|---|---|---|---|---|---|\n")
	accepted, agree := 0, 0
	for _, r := range f.Rows {
		o := searchPublished(t, f, r)
		if o.accepted {
			accepted++
		}
		if o.agrees {
			agree++
		}
		fmt.Fprintf(&b, "| %s | %s | %v | %.3f | %s | %.3f | %d | %v | %s |\n", o.id, o.sizes, o.accepted, o.step, o.bestSizes, o.best, o.rank, o.agrees, o.blocks)
		fmt.Fprintf(&brief, "| %s | %s | %.3f | %.3f | %.2f | %s | %.3f | %v |\n", o.id, o.sizes, o.step, o.measured, o.step/o.measured, o.bestSizes, o.best, o.agrees)
	}
	table := fmt.Sprintf("| row | published | accepted | its step s | suggest's best | best step s | rank in top 5 | agrees | blocks |\n|---|---|---|---|---|---|---|---|---|\n%s\n"+
		"Published layouts accepted: %d of %d; within 5%% of suggest's best or in its top 5: %d of %d.\n", b.String(), accepted, len(f.Rows), agree, len(f.Rows))
	t.Log("\n" + table)
	// Held at what the model reaches (the target is 80% agreeing).
	if accepted < 71 || agree < 57 {
		t.Errorf("accepted %d (held at >= 71), agreeing %d (held at >= 57)", accepted, agree)
	}
	testutil.CheckDocTable(t, "docs/calibration.md", "published layouts", table)
	fmt.Fprintf(&brief, "\nAccepted: %d of %d; agreeing (within 5%% of suggest's best step or in its top 5): %d of %d.\n", accepted, len(f.Rows), agree, len(f.Rows))
	testutil.CheckDocTable(t, "docs/suggest.md", "suggest beside practice", brief.String())
}

// blockID is what blocks a layout, without the figures other issues'
// models put in the message (so that the doc table moves only when the
// verdict does): validate's rule and module, or the memory bound.
func blockID(b string) string {
	if i := strings.Index(b, ":"); i > 0 && strings.Contains(b[:i], " (") {
		return b[:i]
	}
	if strings.Contains(b, " needs ") && strings.Contains(b, "gpu_memory") {
		return "memory (lower bound over gpu_memory)"
	}
	return b
}
