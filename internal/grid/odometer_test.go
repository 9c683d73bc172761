package grid

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The odometer visits every coordinate once, first digit fastest, as
// division gives them from the count; Value is the strided sum; Next
// reports the round exactly once, at the end; Set starts anywhere.
func TestOdometer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		sizes, strides []int
	}{
		{"no digits", nil, nil},
		{"one digit", []int{4}, []int{3}},
		{"a view's five dims", []int{2, 1, 3, 2, 4}, nil},
		{"an enumeration's axes", []int{2, 3, 2}, []int{1, 8, 64}},
		{"eight digits", []int{2, 2, 1, 3, 2, 1, 2, 2}, []int{1, 2, 4, 4, 12, 24, 24, 48}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			od := NewOdometer(tt.sizes, tt.strides)
			total := 1
			for _, s := range tt.sizes {
				total *= s
			}
			for x := range total {
				want, value, rest := make([]int, len(tt.sizes)), 0, x
				for d, s := range tt.sizes {
					want[d] = rest % s
					rest /= s
					if tt.strides != nil {
						value += want[d] * tt.strides[d]
					}
				}
				for d := range tt.sizes {
					require.Equal(t, want[d], od.Digit(d), "count %d digit %d", x, d)
				}
				require.Equal(t, value, od.Value(), "count %d", x)
				from := NewOdometer(tt.sizes, tt.strides)
				from.Set(want)
				require.Equal(t, od, from, "Set at count %d", x)
				assert.Equal(t, x < total-1, od.Next(), "Next after count %d", x)
			}
			assert.Equal(t, NewOdometer(tt.sizes, tt.strides), od, "round to zero")
		})
	}
}
