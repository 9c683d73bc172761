package model

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
)

// ShortfallMargin is the 95th percentile of the measured runs' shortfall
// (1 - total/nvidia-smi, 0 where the estimate is over), rounded up to a
// whole percent: a fixture that moves the percentile moves the margin.
func TestShortfallMarginCoversMeasuredRuns(t *testing.T) {
	rows := measuredAgreement(t)
	short := make([]float64, len(rows))
	for i, r := range rows {
		short[i] = max(0, 1-r.ratio)
	}
	sort.Float64s(short)
	// The nearest-rank percentile: the least shortfall that 95% of the
	// runs do not exceed.
	p95 := short[int(math.Ceil(0.95*float64(len(short))))-1]
	assert.Equal(t, math.Ceil(100*p95)/100, ShortfallMargin, "the measured runs' 95th-percentile shortfall is %.4f", p95)
	covered := 0
	for _, s := range short {
		if s <= ShortfallMargin {
			covered++
		}
	}
	assert.GreaterOrEqual(t, float64(covered), 0.95*float64(len(short)), "%d of %d runs within ShortfallMargin", covered, len(short))
}
