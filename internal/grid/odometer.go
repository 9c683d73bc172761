package grid

// Odometer counts through a grid's coordinates, the first dim fastest, as
// HyperCommGrid orders ranks: each Next is an increment and, at most, a
// carry per dim, where computing a rank's coordinates takes a division
// per dim. It also keeps the value sum(digit*stride), the local rank an
// enumeration's axes give. The enumerations (AppendGroup, Runs), render's
// --by rank and the limit program all count with it.
type Odometer struct {
	axes  []axis
	digit [8]int // a view has five dims; an enumeration's axes are at most those
	value int
}

// NewOdometer returns an odometer at zero over digits of the given sizes
// (at most 8), each step of digit d adding strides[d] to Value; nil
// strides keep Value at 0.
func NewOdometer(sizes, strides []int) Odometer {
	axes := make([]axis, len(sizes))
	for d, s := range sizes {
		axes[d].size = s
		if strides != nil {
			axes[d].stride = strides[d]
		}
	}
	return axesOdometer(axes)
}

// axesOdometer counts over an enumeration's axes.
func axesOdometer(axes []axis) Odometer {
	if len(axes) > 8 {
		panic("grid: an odometer of more than 8 digits") // no view has more than 5 dims
	}
	return Odometer{axes: axes}
}

// Next advances by one; it reports false when every digit rolled over to
// zero (the count went round).
func (o *Odometer) Next() bool {
	digit := o.digit[:len(o.axes)]
	for d, a := range o.axes {
		digit[d]++
		o.value += a.stride
		if digit[d] < a.size {
			return true
		}
		digit[d] = 0
		o.value -= a.size * a.stride
	}
	return false
}

// Digit is digit d: the coordinate of dim d.
func (o *Odometer) Digit(d int) int { return o.digit[d] }

// Value is the sum of each digit times its stride.
func (o *Odometer) Value() int { return o.value }

// Set puts the odometer at digits (one per digit, each below its size).
func (o *Odometer) Set(digits []int) {
	o.value = 0
	for d, a := range o.axes {
		o.digit[d] = digits[d]
		o.value += digits[d] * a.stride
	}
}
