package steptime_test

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// calCase is a published run (testutil.CalRow) made into the model's
// inputs.
type calCase struct {
	row      testutil.CalRow
	dev      steptime.Device
	job      steptime.Job
	train    model.Training
	shape    steptime.Shape
	mod      steptime.Module
	flops    float64 // Megatron's FLOPs per global batch
	measured float64 // seconds per global batch
}

func loadCalibration(t *testing.T) []calCase {
	t.Helper()
	f := testutil.LoadCalibration(t)
	var out []calCase
	for _, r := range f.Rows {
		c, err := buildCase(f, r)
		if err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		out = append(out, c)
	}
	return out
}

func buildCase(f *testutil.Calibration, r testutil.CalRow) (calCase, error) {
	c := calCase{row: r}
	dev, ok := steptime.Devices[r.GPU]
	if !ok {
		return c, fmt.Errorf("no device %q", r.GPU)
	}
	c.dev = dev
	text, err := f.Layout(r, false, "")
	if err != nil {
		return c, err
	}
	l, diags := layout.Parse(r.ID+".yaml", text)
	if diags.HasErrors() {
		return c, fmt.Errorf("layout: %v", diags)
	}
	m := &l.Modules[0]
	z, dp := r.Sizes, r.DP()
	c.train = l.ModelTraining(m, dp)
	c.job = steptime.JobOf(l)
	c.shape = steptime.ShapeIn(l, m)
	par := model.Parallel{NumRanks: r.GPUs, TP: z["tp"], CP: z["cp"], PP: z["pp"], VPP: z["vpp"], DP: dp, EP: z["ep"], ExptTP: z["expt_tp"]}
	est := model.Compute(m.Model.Config, par, c.train)
	c.mod = steptime.Module{Offset: 0, Ranks: r.GPUs, TP: z["tp"], GTPRemat: 1, CP: z["cp"], PP: z["pp"], VPP: z["vpp"], DP: dp,
		EP: z["ep"], ExptTP: z["expt_tp"], Microbatches: c.job.Microbatches(dp), Params: est.Megatron.ShardParameters}
	// The row's pipeline split, as the search scores the layout (a
	// pipeline layout states the virtual stages itself).
	par.Split = m.Split
	if par.Split.Layout != "" || par.VPP == 1 {
		par.VPP = 0
	}
	c.mod.Imbalance, c.mod.LastShort = steptime.Stages(m, par)
	c.flops = c.shape.FLOPsPerSample * float64(c.job.Samples)
	cfg := m.Model.Config.Resolve()
	c.measured, err = r.MeasuredStep(cfg.SeqLength, cfg.NumLayers, cfg.HiddenSize, model.PaddedVocabSize(cfg.VocabSize, cfg.MakeVocabSizeDivisibleBy, 1))
	return c, err
}

// agreement is the figures over a set of rows.
type agreement struct {
	n            int
	medianAbsErr float64 // median |predicted/measured - 1|
	within15     int
	spearman     float64 // of predicted and measured TFLOP/s per GPU
	// spearmanMFU is the figure: of predicted and measured MFU,
	// each row's rate over its GPU's data-sheet peak at its precision
	// (fp8's for an fp8 run, as the sources compute their MFU:
	// dgxc-benchmarking llama3.1/README_70b.md:34-48 at 35a9aec).
	spearmanMFU float64
}

func agree(cs []calCase, k steptime.Constants) agreement {
	var errs, pred, meas, predMFU, measMFU []float64
	a := agreement{n: len(cs)}
	for _, c := range cs {
		p := predict(c, k)
		e := math.Abs(p/c.measured - 1)
		errs = append(errs, e)
		if e <= 0.15 {
			a.within15++
		}
		// Per GPU: c.flops is the global batch's, whose rate ranks
		// the rows by their GPU count.
		g := float64(c.row.GPUs)
		pred = append(pred, c.flops/p/g)
		meas = append(meas, c.flops/c.measured/g)
		peak := c.dev.BF16
		if c.train.FP8 != "" && c.dev.FP8 > 0 {
			peak = c.dev.FP8
		}
		predMFU = append(predMFU, c.flops/p/g/peak)
		measMFU = append(measMFU, c.flops/c.measured/g/peak)
	}
	a.medianAbsErr = median(errs)
	a.spearman = spearman(pred, meas)
	a.spearmanMFU = spearman(predMFU, measMFU)
	return a
}

func predict(c calCase, k steptime.Constants) float64 {
	m := steptime.NewCalibrated(c.dev, c.job, c.train)
	m.K = k
	return m.Time(&c.shape, c.mod).Total
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	if len(y)%2 == 1 {
		return y[len(y)/2]
	}
	return (y[len(y)/2-1] + y[len(y)/2]) / 2
}

func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

// spearman is the Pearson correlation of the ranks (ties averaged).
func spearman(a, b []float64) float64 {
	ra, rb := ranks(a), ranks(b)
	n := float64(len(a))
	var ma, mb float64
	for i := range ra {
		ma += ra[i] / n
		mb += rb[i] / n
	}
	var sab, saa, sbb float64
	for i := range ra {
		sab += (ra[i] - ma) * (rb[i] - mb)
		saa += (ra[i] - ma) * (ra[i] - ma)
		sbb += (rb[i] - mb) * (rb[i] - mb)
	}
	return sab / math.Sqrt(saa*sbb)
}

func split(cs []calCase) (fit, held []calCase) {
	for _, c := range cs {
		if c.row.Set == "heldout" {
			held = append(held, c)
		} else {
			fit = append(fit, c)
		}
	}
	return fit, held
}
