package estimate

import (
	"fmt"
	"math"

	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// MaxFigure is the largest parameter count or byte count estimate reports:
// 2^62, so that each rounds to an int64 exactly enough and their sums do
// not overflow. A layout's largest model sizes (every dimension at 2^24)
// give ~2^76 parameters, which were printed as -9223372036854775808.
const MaxFigure = 1 << 62

// Check refuses a report that would hold a negative, NaN, infinite or
// too large figure: the model's sizes are beyond what any GPU holds by
// many orders, and no number estimate could print would be right. Exit 1,
// naming the module and the figure.
func Check(res *validate.Result) error {
	for _, me := range res.Estimates {
		e := me.Estimate
		for _, f := range []struct {
			name  string
			v     float64
			count bool // printed as an integer
		}{
			{"parameters", e.Megatron.Parameters, true},
			{"active parameters", e.Megatron.ActiveParameters, true},
			{"weight and optimizer bytes", e.WeightAndOptimizerBytes(), true},
			{"activation bytes", e.ActivationBytes(), true},
			{"overhead bytes", e.OverheadBytes(), true},
			{"total bytes", e.TotalBytes(), true},
			{"Megatron's weight and optimizer bytes", e.Megatron.WeightAndOptimizerBytes, false},
			{"Megatron's activation bytes", e.Megatron.ActivationBytes, false},
			{"FLOPs per sample", e.Megatron.FLOPsPerSample, false},
		} {
			switch {
			case math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0:
				return exitcode.Wrap(exitcode.Invalid, fmt.Errorf("module %q: the model gives %s %g, which estimate cannot report: check its sizes", me.Name, f.name, f.v))
			case f.count && f.v > MaxFigure:
				return exitcode.Wrap(exitcode.Invalid, fmt.Errorf("module %q: the model gives %s %.3g, more than %d (2^62), which estimate reports exactly: its sizes are beyond any GPU", me.Name, f.name, f.v, int64(MaxFigure)))
			}
		}
	}
	return nil
}
