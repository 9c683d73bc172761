// Package steptimetest checks a steptime.Model against the inequalities
// its interface states, in the manner of testing/fstest: any model, the
// analytic one or a calibrated one, must pass TestModel before the search
// may use it.
package steptimetest

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/mimoplan/mimoplan/internal/steptime"
)

// TestModel checks m on rounds random shapes and modules drawn from seed,
// and returns the violations of steptime.Model's inequalities it found:
// the first of each, naming the inequality's number and the inputs (nil:
// none).
func TestModel(m steptime.Model, seed uint64, rounds int) error {
	c := &checker{m: m, f: m.Fastest(), r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	c.zero()
	for range rounds {
		s := c.shape()
		c.compute(&s)
		for range 8 {
			mod := c.module()
			c.check(&s, &mod)
		}
	}
	return errors.Join(c.errs...)
}

type checker struct {
	m, f   steptime.Model
	r      *rand.Rand
	errs   []error
	failed [12]bool
}

func (c *checker) fail(rule int, format string, args ...any) {
	if !c.failed[rule] {
		c.failed[rule] = true
		c.errs = append(c.errs, fmt.Errorf("inequality %d: %s", rule, fmt.Sprintf(format, args...)))
	}
}

func (c *checker) pow2(max int) int { return 1 << c.r.IntN(max+1) }

// shape draws a model from tiny to beyond the largest published ones; a
// third have no MoE layer.
func (c *checker) shape() steptime.Shape {
	layers := 1 + c.r.IntN(128)
	s := steptime.Shape{
		FLOPsPerSample: 1e9 * float64(1+c.r.IntN(1_000_000)),
		Layers:         layers,
		Hidden:         64 * (1 + c.r.IntN(256)),
		Seq:            1 + c.r.IntN(131072),
		KVDim:          64 * (1 + c.r.IntN(128)),
		TopK:           1 + c.r.IntN(8),
	}
	if c.r.IntN(3) > 0 {
		s.MoELayers = c.r.IntN(layers + 1)
	}
	return s
}

// module draws sizes, a span that holds them and the rest: offsets up to
// 64 nodes of 8, micro-batches up to 4,096, parameters up to 10^11.
func (c *checker) module() steptime.Module {
	m := steptime.Module{TP: c.pow2(3), GTPRemat: c.pow2(1), CP: c.pow2(3), PP: c.pow2(4), DP: 1 + c.r.IntN(16),
		EP: c.pow2(3), ExptTP: c.pow2(2), VPP: c.r.IntN(5)}
	m.Ranks = m.TP * m.GTPRemat * m.CP * m.PP * m.DP
	m.Offset = c.r.IntN(512)
	m.Microbatches = 1 + c.r.IntN(4096)
	m.Params = c.r.Float64() * 1e11
	if c.r.IntN(2) == 0 {
		// An uneven split: a busier stage, a lighter or heavier last one.
		m.Imbalance = 1 + c.r.Float64()
		m.LastShort = 1.5*c.r.Float64() - 0.5
	}
	return m
}

// zero: the zero Shape costs nothing (inequality 2).
func (c *checker) zero() {
	var s steptime.Shape
	m := c.module()
	if t := c.m.Time(&s, m); t != (steptime.Parts{}) {
		c.fail(2, "the zero Shape costs %+v on %+v", t, m)
	}
}

// compute checks inequality 8 over every rank count up to 4,096.
func (c *checker) compute(s *steptime.Shape) {
	prev := c.m.Compute(s, 1)
	for n := 2; n <= 4096; n++ {
		v := c.m.Compute(s, n)
		if v > prev {
			c.fail(8, "Compute on %d ranks %g > on %d ranks %g, shape %+v", n, v, n-1, prev, *s)
			return
		}
		prev = v
	}
}

func (c *checker) check(s *steptime.Shape, m *steptime.Module) {
	t, ft := c.m.Time(s, *m), c.f.Time(s, *m)
	if t2 := c.m.Time(s, *m); t2 != t {
		c.fail(1, "Time twice: %+v then %+v, module %+v", t, t2, *m)
	}
	for _, p := range []steptime.Parts{t, ft} {
		if p.Compute < 0 || p.Bubble < 0 || p.TP < 0 || p.CP < 0 || p.EP < 0 || p.PP < 0 || p.DP < 0 ||
			p.Total != p.Compute+p.Bubble+p.TP+p.CP+p.EP+p.PP+p.DP {
			c.fail(2, "parts %+v: a negative part or a total that is not their sum, module %+v", p, *m)
		}
	}
	if comp := c.m.Compute(s, m.Ranks); comp > ft.Total {
		c.fail(3, "Compute %g > Fastest's Time %g, shape %+v module %+v", comp, ft.Total, *s, *m)
	}
	if ft.Total > t.Total {
		c.fail(4, "Fastest's Time %g > Time %g, shape %+v module %+v", ft.Total, t.Total, *s, *m)
	}
	lb := c.m.LowerBound(s, *m)
	classes := map[int]steptime.Parts{}
	for range 16 {
		o := *m
		o.Offset = c.r.IntN(512)
		if o.Offset%2 == 0 {
			o.Offset = m.Offset + 8*c.r.IntN(64) // the same place in a node of 8, often
		}
		if got := c.f.Time(s, o); got != ft {
			c.fail(5, "Fastest's Time at offset %d %+v, at %d %+v", o.Offset, got, m.Offset, ft)
		}
		got := c.m.Time(s, o)
		k := c.m.OffsetClass(o.Offset)
		if p, ok := classes[k]; ok && p != got {
			c.fail(6, "Time at offset %d (class %d) %+v differs from another of its class %+v, module %+v", o.Offset, k, got, p, o)
		}
		classes[k] = got
		o.Microbatches = 1 + c.r.IntN(4096)
		o.Params = c.r.Float64() * 1e11
		if f := c.f.Time(s, o).Total; lb > f*(1+1e-9) {
			c.fail(9, "LowerBound %g > Fastest's Time %g of %+v", lb, f, o)
		}
	}
	more := *m
	more.Microbatches += 1 + c.r.IntN(4096)
	if a, b := c.m.Time(s, more).Total, t.Total; a > b {
		c.fail(7, "Time with %d micro-batches %g > with %d %g", more.Microbatches, a, m.Microbatches, b)
	}
	if a, b := c.f.Time(s, more).Total, ft.Total; a > b {
		c.fail(7, "Fastest's Time with %d micro-batches %g > with %d %g", more.Microbatches, a, m.Microbatches, b)
	}
	even := *m
	even.Imbalance, even.LastShort = 0, 1
	if a, b := c.m.Time(s, even).Total, t.Total; a > b {
		c.fail(11, "Time with an even split and the lightest last stage %g > with imbalance %g, last stage short %g %g", a, m.Imbalance, m.LastShort, b)
	}
	if a, b := c.m.LowerBound(s, even), c.f.Time(s, *m).Total; a > b*(1+1e-9) {
		c.fail(11, "LowerBound with the lightest last stage %g > Fastest's Time %g with imbalance %g, last stage short %g", a, b, m.Imbalance, m.LastShort)
	}
	if s.MoELayers == 0 {
		x := *m
		x.ExptTP = c.pow2(3)
		if got := c.m.Time(s, x); got != t {
			c.fail(10, "without MoE layers, expt_tp %d gives %+v, expt_tp %d %+v", x.ExptTP, got, m.ExptTP, t)
		}
	}
}
