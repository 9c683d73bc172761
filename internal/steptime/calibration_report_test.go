package steptime_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// TestCalibration reports predicted beside measured for every published
// run and holds the agreement the fitted constants reach.
func TestCalibration(t *testing.T) {
	cs := loadCalibration(t)
	var b strings.Builder
	fmt.Fprintf(&b, "| row | set | GPUs | layout | predicted s | measured s | predicted / measured | predicted TFLOP/s/GPU | measured |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range cs {
		p := predict(c, steptime.Fitted)
		z := c.mod
		lay := fmt.Sprintf("tp%d pp%d vpp%d cp%d ep%d dp%d", z.TP, z.PP, max(1, z.VPP), z.CP, z.EP, z.DP)
		mark := ""
		if c.row.Assumed != "" {
			mark = " *"
		}
		fmt.Fprintf(&b, "| %s%s | %s | %d %s %s | %s | %.3f | %.3f | %.2f | %.0f | %.0f |\n", c.row.ID, mark, c.row.Set, c.row.GPUs, c.row.GPU, c.row.Precision, lay,
			p, c.measured, p/c.measured, c.flops/p/float64(c.row.GPUs)/1e12, c.flops/c.measured/float64(c.row.GPUs)/1e12)
	}
	b.WriteString("\n")
	fit, held := split(cs)
	// The figures the fitted constants reach (docs/suggest.md), held: the
	// issue's targets are a median |p/m-1| <= 0.15 and a Spearman of MFU
	// >= 0.8. Each limit: the median, the Spearman of TFLOP/s per GPU, of
	// MFU.
	limits := map[string][3]float64{"all": {0.098, 0.94, 0.86}, "fit": {0.098, 0.93, 0.84}, "heldout": {0.098, 0.96, 0.91},
		"Megatron-Bridge": {0.093, 0.91, 0.85}, "NeMo 24.07": {0.1, 0.46, 0.46}, "dgxc-benchmarking v24.11.1": {0.099, 0.72, 0.74},
		"dgxc-benchmarking v24.11.1 BF16": {0.099, -0.18, -0.18}, "dgxc-benchmarking v24.11.1 FP8": {0.1, 0.14, 0.14},
		"dgxc-benchmarking v25.05.04": {0.12, 0.89, 0.93}}
	dgxc := sourceRows(cs, "dgxc-24.11.1-")
	for _, s := range []struct {
		name string
		cs   []calCase
	}{{"all", cs}, {"fit", fit}, {"heldout", held}, {"Megatron-Bridge", sourceRows(cs, "bridge-")}, {"NeMo 24.07", sourceRows(cs, "nemo-")}, {"dgxc-benchmarking v24.11.1", dgxc},
		{"dgxc-benchmarking v25.05.04", sourceRows(cs, "dgxc-25.05.04-")},
		{"dgxc-benchmarking v24.11.1 BF16", precisionRows(dgxc, "bf16")}, {"dgxc-benchmarking v24.11.1 FP8", precisionRows(dgxc, "fp8")}} {
		a := agree(s.cs, steptime.Fitted)
		fmt.Fprintf(&b, "- %s rows (%d): median \\|predicted/measured - 1\\| %.3f, %d within 15%%, Spearman of predicted and measured TFLOP/s per GPU %.3f, of MFU %.3f\n", s.name, a.n, a.medianAbsErr, a.within15, a.spearman, a.spearmanMFU)
		if l := limits[s.name]; a.medianAbsErr > l[0] || a.spearman < l[1] || a.spearmanMFU < l[2] {
			t.Errorf("%s rows: median |predicted/measured - 1| %.3f (held at <= %.3f), Spearman %.3f (held at >= %.2f), of MFU %.3f (held at >= %.2f)",
				s.name, a.medianAbsErr, l[0], a.spearman, l[1], a.spearmanMFU, l[2])
		}
	}
	t.Log("\n" + b.String())
	testutil.CheckDocTable(t, "docs/calibration.md", "predicted and measured", b.String())
}

// precisionRows are the rows of cs at precision p: dgxc-benchmarking
// gives each layout at BF16 and FP8, whose spread would carry the
// Spearman of its rows.
func precisionRows(cs []calCase, p string) []calCase {
	var out []calCase
	for _, c := range cs {
		if c.row.Precision == p {
			out = append(out, c)
		}
	}
	return out
}

// sourceRows are one source's rows (their ids' prefix): the
// Megatron-Bridge rows (today's recipes on H100 and B200) and NeMo 24.07's
// (H100, FP8), where the Spearman is not carried by the spread between GPUs.
func sourceRows(cs []calCase, prefix string) []calCase {
	var out []calCase
	for _, c := range cs {
		if strings.HasPrefix(c.row.ID, prefix) {
			out = append(out, c)
		}
	}
	return out
}
