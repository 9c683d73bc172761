package steptime_test

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// measuredFile is the part of testdata/measured/*.json the step-time
// model is held against: each configuration's median step.
type measuredFile struct {
	Configs map[string]struct {
		Step *struct {
			Median float64 `json:"median_step_s"`
			FLOPs  float64 `json:"model_flops_per_step"`
		} `json:"step"`
		Run string `json:"run"`
	} `json:"configs"`
}

// predictLayout is the calibrated model's step for layout l on dev:
// modules on the same ranks run one after the other, on disjoint ranks side
// by side (as plan scores a candidate).
func predictLayout(t *testing.T, l *layout.Layout, dev steptime.Device) float64 {
	t.Helper()
	tm := steptime.Select{Dev: dev}.For(l)
	j := steptime.JobOf(l)
	lanes := 1
	for i := range l.Modules {
		if m := &l.Modules[i]; m.Name == "language" {
			lanes = m.NumRanks / (size(m.TP) * size(m.CP) * size(m.PP))
		}
	}
	var sum, most float64
	coloc := len(l.Modules) > 1
	for i := range l.Modules {
		m := &l.Modules[i]
		coloc = coloc && m.RankOffset == l.Modules[0].RankOffset && m.NumRanks == l.Modules[0].NumRanks
		dp := m.NumRanks / (size(m.TP) * size(m.CP) * size(m.PP))
		mod := steptime.Module{Offset: m.RankOffset, Ranks: m.NumRanks, TP: size(m.TP), GTPRemat: 1, CP: size(m.CP), PP: size(m.PP), VPP: m.VPP,
			DP: dp, EP: size(m.EP), ExptTP: size(m.ExptTP), Microbatches: j.Microbatches(lanes)}
		if m.Model != nil {
			tr := l.ModelTraining(m, dp)
			mod.Params = model.Compute(m.Model.Config, model.Parallel{NumRanks: m.NumRanks, TP: mod.TP, CP: mod.CP, PP: mod.PP, DP: dp, EP: mod.EP, ExptTP: mod.ExptTP}, tr).Megatron.ShardParameters
		}
		s := steptime.ShapeIn(l, m)
		x := tm.Time(&s, mod).Total
		sum += x
		most = max(most, x)
	}
	if coloc {
		return sum
	}
	return most
}

func size(v int) int { return max(1, v) }

// The measured runs of the gpu helper (testdata/measured: Megatron-core's
// local layer spec, torch AdamW, no overlap, 1 and 2 GPUs): none of them
// was fitted (the local stack's figures come from component measurements,
// LocalMeasured); predicted beside measured, and the agreement, held.
func TestMeasuredSteps(t *testing.T) {
	dir := filepath.Join(testutil.RepoRoot(), "testdata", "measured")
	var b strings.Builder
	fmt.Fprintf(&b, "| configuration | GPU | run | predicted s | measured s | predicted / measured |\n|---|---|---|---|---|---|\n")
	var errs, pred, meas []float64
	for _, f := range []struct{ file, gpu string }{{"h200-x2.json", "H200"}, {"h100-x1.json", "H100"}} {
		var mf measuredFile
		testutil.LoadMeasured(t, f.file, &mf)
		names := make([]string, 0, len(mf.Configs))
		for n, c := range mf.Configs {
			if c.Step != nil && c.Step.Median > 0 {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			c := mf.Configs[n]
			l, diags, err := layout.Load(filepath.Join(dir, n+".yaml"))
			if err != nil || diags.HasErrors() {
				t.Fatalf("%s: %v %v", n, err, diags)
			}
			p := predictLayout(t, l, steptime.Devices[f.gpu])
			r := p / c.Step.Median
			errs = append(errs, math.Abs(r-1))
			// Per GPU: the runs have one or two.
			gpus := 0
			for _, m := range l.Modules {
				gpus = max(gpus, m.RankOffset+m.NumRanks)
			}
			pred = append(pred, c.Step.FLOPs/p/float64(gpus))
			meas = append(meas, c.Step.FLOPs/c.Step.Median/float64(gpus))
			fmt.Fprintf(&b, "| %s | %s | %s | %.3f | %.3f | %.2f |\n", n, f.gpu, c.Run, p, c.Step.Median, r)
		}
	}
	a := agreement{n: len(errs), medianAbsErr: median(errs), spearman: spearman(pred, meas)}
	fmt.Fprintf(&b, "\n- %d measured runs: median \\|predicted/measured - 1\\| %.3f, Spearman of predicted and measured TFLOP/s per GPU %.3f\n", a.n, a.medianAbsErr, a.spearman)
	t.Log("\n" + b.String())
	// Held at what the model reaches on this stack (issue 24's target is
	// 0.15 and 0.8).
	if a.medianAbsErr > 0.081 || a.spearman < 0.97 {
		t.Errorf("measured runs: median |predicted/measured - 1| %.3f (held at <= 0.081), Spearman %.3f (held at >= 0.97)", a.medianAbsErr, a.spearman)
	}
	testutil.CheckDocTable(t, "docs/calibration.md", "measured on the lent GPUs", b.String())
}

// The MoE whole steps measured again (components-h200.json's steps: runs
// c6a and c6b, one machine, beside the components of run c6), against the
// same predictions: how far a second measurement of a held-out run moves
// its error. Held: every repeat predicted within 20%, and the table.
func TestMeasuredRepeats(t *testing.T) {
	dir := filepath.Join(testutil.RepoRoot(), "testdata", "measured")
	var f struct {
		Steps []struct {
			Config string `json:"config"`
			Run    string `json:"run"`
			Step   struct {
				Median float64 `json:"median_step_s"`
			} `json:"step"`
		} `json:"steps"`
	}
	testutil.LoadMeasured(t, "components-h200.json", &f)
	if len(f.Steps) == 0 {
		t.Fatal("components-h200.json: no steps")
	}
	first := map[string]float64{}
	for _, file := range []string{"h200-x2.json", "h100-x1.json"} {
		var mf measuredFile
		testutil.LoadMeasured(t, file, &mf)
		for n, c := range mf.Configs {
			if c.Step != nil && file == "h200-x2.json" {
				first[n] = c.Step.Median
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| configuration | run | predicted s | measured s | predicted / measured | first measured s (h200-x2.json) |\n|---|---|---|---|---|---|\n")
	var errs []float64
	for _, s := range f.Steps {
		l, diags, err := layout.Load(filepath.Join(dir, s.Config+".yaml"))
		if err != nil || diags.HasErrors() {
			t.Fatalf("%s: %v %v", s.Config, err, diags)
		}
		p := predictLayout(t, l, steptime.Devices["H200"])
		r := p / s.Step.Median
		errs = append(errs, math.Abs(r-1))
		fmt.Fprintf(&b, "| %s | %s | %.3f | %.3f | %.2f | %.3f |\n", s.Config, s.Run, p, s.Step.Median, r, first[s.Config])
		if math.Abs(r-1) > 0.20 {
			t.Errorf("%s (%s): predicted %.3f s, measured %.3f s", s.Config, s.Run, p, s.Step.Median)
		}
	}
	fmt.Fprintf(&b, "\n- %d repeats: median \\|predicted/measured - 1\\| %.3f\n", len(errs), median(errs))
	t.Log("\n" + b.String())
	testutil.CheckDocTable(t, "docs/calibration.md", "MoE steps measured again", b.String())
}
