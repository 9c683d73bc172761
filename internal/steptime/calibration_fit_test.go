package steptime_test

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/steptime"
)

var (
	fitFlag = flag.Bool("fit", false, "search the calibrated model's constants on the fit rows and print them")
	fitOnly = flag.String("fit-only", "", "with -fit: search only these constants (comma-separated names), the others held at Fitted")
)

// searched is the constants -fit searches: every fitted one, or those
// -fit-only names.
func searched(t *testing.T) []param {
	if *fitOnly == "" {
		return fitted
	}
	var ps []param
	for _, name := range strings.Split(*fitOnly, ",") {
		n := len(ps)
		for _, p := range fitted {
			if p.name == strings.TrimSpace(name) {
				ps = append(ps, p)
			}
		}
		if len(ps) == n {
			t.Fatalf("-fit-only: no fitted constant %q", name)
		}
	}
	return ps
}

// param is a fitted constant: where it lives and the range it may take
// (physical limits: efficiencies and exposed shares within (0, 1]).
type param struct {
	name   string
	ptr    func(*steptime.Constants) *float64
	lo, hi float64
}

var fitted = []param{
	{"GEMMEfficiency", func(k *steptime.Constants) *float64 { return &k.GEMMEfficiency }, 0.3, 0.95},
	{"WidthHalf", func(k *steptime.Constants) *float64 { return &k.WidthHalf }, 1, 4096},
	{"TokensHalf", func(k *steptime.Constants) *float64 { return &k.TokensHalf }, 1, 8192},
	{"FP8Efficiency", func(k *steptime.Constants) *float64 { return &k.FP8Efficiency }, 0.5, 1},
	{"AttnEfficiency", func(k *steptime.Constants) *float64 { return &k.AttnEfficiency }, 0.2, 0.8},
	{"ElementwiseBytes", func(k *steptime.Constants) *float64 { return &k.ElementwiseBytes }, 0, 400},
	{"CollectiveEfficiency", func(k *steptime.Constants) *float64 { return &k.CollectiveEfficiency }, 0.3, 1},
	{"TPExposed", func(k *steptime.Constants) *float64 { return &k.TPExposed }, 0, 1},
	{"EPExposed", func(k *steptime.Constants) *float64 { return &k.EPExposed }, 0, 1},
	{"MoESync", func(k *steptime.Constants) *float64 { return &k.MoESync }, 0, 0.05},
	{"PPExposed", func(k *steptime.Constants) *float64 { return &k.PPExposed }, 0, 1},
	{"PPSync", func(k *steptime.Constants) *float64 { return &k.PPSync }, 0, 0.01},
}

// loss is the mean squared log error of the predicted steps on cs.
func loss(cs []calCase, k steptime.Constants) float64 {
	var s float64
	for _, c := range cs {
		d := math.Log(predict(c, k) / c.measured)
		s += d * d
	}
	return s / float64(len(cs))
}

// descend is coordinate descent on the fit rows' loss from k, each
// constant within its range, by ever finer factors until none improves.
func descend(fit []calCase, ps []param, k steptime.Constants) (steptime.Constants, float64) {
	best := loss(fit, k)
	for round := 0; round < 1000; round++ {
		improved := false
		for _, p := range ps {
			for _, step := range []float64{1.5, 1 / 1.5, 1.1, 1 / 1.1, 1.02, 1 / 1.02, 1.005, 1 / 1.005} {
				trial := k
				v := p.ptr(&trial)
				*v = math.Min(p.hi, math.Max(p.lo, *v*step))
				if *v == 0 {
					*v = p.lo + 0.01*(p.hi-p.lo)
				}
				if l := loss(fit, trial); l < best {
					best, k, improved = l, trial, true
				}
			}
		}
		if !improved {
			break
		}
	}
	return k, best
}

// fitStarts is how many points the search descends from: Fitted, and the
// rest drawn log-uniformly within the ranges (a fixed seed, so that the
// search gives the same constants on every machine). The loss is flat
// along a valley where one descent stops wherever it enters it; the least
// of many is the valley's floor.
const fitStarts = 100

// TestCalibrationFit searches the constants on the fit rows alone
// (coordinate descent from fitStarts points, each constant within its
// range) and prints the least-loss point; run with -fit and copy the
// result into constants.go.
func TestCalibrationFit(t *testing.T) {
	if !*fitFlag {
		t.Skip("run with -fit")
	}
	fit, held := split(loadCalibration(t))
	ps := searched(t)
	rng := rand.New(rand.NewSource(1))
	k, best := descend(fit, ps, steptime.Fitted)
	start, startHeld := loss(fit, steptime.Fitted), loss(held, steptime.Fitted)
	var near []steptime.Constants // the minima within 1% of the least
	var all []float64
	for i := 1; i < fitStarts; i++ {
		s := steptime.Fitted
		for _, p := range ps {
			lo := math.Max(p.lo, 1e-4)
			*p.ptr(&s) = math.Exp(math.Log(lo) + rng.Float64()*(math.Log(p.hi)-math.Log(lo)))
		}
		m, l := descend(fit, ps, s)
		all = append(all, l)
		if l < best {
			k, best = m, l
		}
		near = append(near, m)
	}
	var b strings.Builder
	for _, p := range ps {
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, m := range near {
			if all[i] <= best*1.01 {
				lo, hi = math.Min(lo, *p.ptr(&m)), math.Max(hi, *p.ptr(&m))
			}
		}
		fmt.Fprintf(&b, "\t%s: %.4g, // minima within 1%%: %.4g-%.4g\n", p.name, *p.ptr(&k), lo, hi)
	}
	t.Logf("fit loss %.5f (rows %d; %.5f at Fitted), held-out loss %.4f (rows %d; %.4f at Fitted)\n%s",
		best, len(fit), start, loss(held, k), len(held), startHeld, b.String())
	f, h := agree(fit, k), agree(held, k)
	t.Logf("fit: median |p/m-1| %.3f, spearman %.3f; held-out: median %.3f, spearman %.3f", f.medianAbsErr, f.spearman, h.medianAbsErr, h.spearman)
}
