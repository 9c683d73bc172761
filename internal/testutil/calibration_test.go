package testutil

import (
	"math"
	"testing"
)

// MeasuredStep reads each kind of published figure: a step as it is, a
// throughput through the global batch, TFLOP/s through the row's formula.
func TestMeasuredStep(t *testing.T) {
	batch := map[string]int{"global_batch_size": 128}
	tests := []struct {
		name     string
		gpus     int
		measured map[string]any
		want     float64 // seconds per global batch
		wantErr  bool
	}{
		// dgxc llama3.1/README_8b.md:54: 12.91 s on 8 GPUs.
		{"step", 8, map[string]any{"step_s": 12.91}, 12.91, false},
		// A step beside a throughput: the step is the published figure.
		{"step beside tokens", 8, map[string]any{"step_s": 2, "tokens_per_s_per_gpu": 1}, 2, false},
		// 128 samples of 4096 tokens at 16384 tokens/s on each of 8 GPUs.
		{"tokens", 8, map[string]any{"tokens_per_s_per_gpu": 16384}, 4, false},
		// megatron-r0.8: 72 s l h^2 (1 + s/6h + V/12lh) with s 4096, l 2,
		// h 1024, V 49152: 72*4096*2*1024^2 * (1 + 4096/6144 + 2) = 2.3622e12
		// per sample, x 128 samples / (8 GPUs x 1e12).
		{"tflops", 8, map[string]any{"tflops_per_gpu": 1, "formula": "megatron-r0.8"}, 72 * 4096 * 2 * 1024 * 1024 * (1 + 4096.0/6144 + 2) * 128 / 8e12, false},
		{"unknown formula", 8, map[string]any{"tflops_per_gpu": 1, "formula": "other"}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := CalRow{ID: tt.name, GPUs: tt.gpus, Batch: batch, Measured: tt.measured}
			got, err := r.MeasuredStep(4096, 2, 1024, 49152)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want one: %v", err, tt.wantErr)
			}
			if !tt.wantErr && math.Abs(got/tt.want-1) > 1e-12 {
				t.Errorf("step %v, want %v", got, tt.want)
			}
		})
	}
}
