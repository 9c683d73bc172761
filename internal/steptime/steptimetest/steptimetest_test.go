package steptimetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/steptime"
)

// The analytic model keeps every inequality, on one node and on several,
// for each target's batch semantics and each built-in GPU, and with a
// network faster than NVLink (Fastest then takes the network's figure).
func TestAnalyticConforms(t *testing.T) {
	t.Parallel()
	fastNet := steptime.GPUs["H100"]
	fastNet.Network = 2 * fastNet.NVLink
	tests := []struct {
		name string
		hw   steptime.Hardware
		job  steptime.Job
	}{
		{"H100, one node", steptime.GPUs["H100"], steptime.Job{Samples: 64, MicroBatch: 1}},
		{"H100, nodes of 8", steptime.GPUs["H100"], steptime.Job{GPUsPerNode: 8, Samples: 1024, MicroBatch: 2}},
		{"B200, nodes of 4, bridge", steptime.GPUs["B200"], steptime.Job{GPUsPerNode: 4, Samples: 256, MicroBatch: 8, Bridge: true}},
		{"network faster than NVLink", fastNet, steptime.Job{GPUsPerNode: 8, Samples: 7, MicroBatch: 3}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, TestModel(steptime.New(tt.hw, tt.job), uint64(i), 300))
		})
	}
}

// broken is the analytic model with one inequality broken.
type broken struct {
	*steptime.Analytic
	rule int
}

func (b broken) Time(s *steptime.Shape, m steptime.Module) steptime.Parts {
	t := b.Analytic.Time(s, m)
	switch {
	case b.rule == 6 && m.Offset%3 == 0 && s.FLOPsPerSample > 0:
		t.PP++ // reads more of the offset than its class
		t.Total++
	case b.rule == 7:
		t.Bubble += float64(m.Microbatches) // grows with the micro-batches
		t.Total += float64(m.Microbatches)
	case b.rule == 10 && s.FLOPsPerSample > 0:
		t.EP += float64(m.ExptTP)
		t.Total += float64(m.ExptTP)
	}
	return t
}

func (b broken) Compute(s *steptime.Shape, n int) float64 {
	switch b.rule {
	case 3:
		return 2 * b.Analytic.Compute(s, n)
	case 8:
		return b.Analytic.Compute(s, n) * float64(n%7+1)
	}
	return b.Analytic.Compute(s, n)
}

func (b broken) LowerBound(s *steptime.Shape, m steptime.Module) float64 {
	if b.rule == 9 {
		return b.Analytic.Time(s, m).Total * 3
	}
	return b.Analytic.LowerBound(s, m)
}

func (b broken) Fastest() steptime.Model {
	switch b.rule {
	case 4: // slower than the job's own model
		hw, job := b.HW, b.Job
		hw.NVLink, job.GPUsPerNode = hw.Network/2, 0
		return steptime.New(hw, job)
	case 5:
		return b // the job's own model, which reads the offset
	}
	return broken{b.Analytic.Fastest().(*steptime.Analytic), b.rule}
}

// TestModel finds each broken inequality, and names it.
func TestModelFindsBrokenInequalities(t *testing.T) {
	t.Parallel()
	hw := steptime.GPUs["H100"]
	job := steptime.Job{GPUsPerNode: 8, Samples: 512, MicroBatch: 1}
	for _, rule := range []int{3, 4, 5, 6, 7, 8, 9, 10} {
		err := TestModel(broken{steptime.New(hw, job), rule}, 1, 50)
		require.Error(t, err, "inequality %d", rule)
		assert.Contains(t, err.Error(), fmt.Sprintf("inequality %d:", rule), "inequality %d", rule)
		assert.Equal(t, 1, strings.Count(err.Error(), fmt.Sprintf("inequality %d:", rule)), "the first violation of each")
	}
}
