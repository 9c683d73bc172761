package validate

// stripe is the rank enumeration of a group kind that varies one grid dim
// (tp, cp or expt_tp), described by arithmetic instead of listed: group
// lo + hi*stride (lo < stride, hi < blocks, HyperCommGrid's order) holds
// the ranks offset + lo + hi*stride*size + k*stride for k < size. Every
// question the locality rule asks of it is answered without visiting
// ranks, so that its cost does not grow with the size of the world.
type stripe struct {
	offset, stride, size, blocks int
}

// groups is the number of groups.
func (s stripe) groups() int { return s.stride * s.blocks }

// span is the distance from a group's first rank to its last.
func (s stripe) span() int { return (s.size - 1) * s.stride }

// block is the distance between the first ranks of groups hi and hi+1
// with the same lo.
func (s stripe) block() int { return s.stride * s.size }

// first returns the first rank of group i.
func (s stripe) first(i int) int {
	return s.offset + i%s.stride + i/s.stride*s.block()
}

// rank returns member k of group i.
func (s stripe) rank(i, k int) int { return s.first(i) + k*s.stride }

// crossing counts the groups whose ranks sit on more than one node of gpn
// ranks each, and returns the index of the first of them (-1 if none).
//
// A group's ranks lie between its first rank b and b+span, both members,
// so it crosses a node boundary exactly when b mod gpn >= gpn-span. The
// count is a sum of floors of linear functions, which floorSum adds up in
// logarithmic time; one of the two sums runs over min(stride, blocks)
// terms, at most the square root of the module's ranks.
func (s stripe) crossing(gpn int) (count, first int) {
	if s.size < 2 || s.blocks == 0 {
		return 0, -1
	}
	span := s.span()
	if span >= gpn {
		return s.groups(), 0
	}
	low := gpn - span // a group crosses when its first rank mod gpn >= low
	b := s.block()
	if s.stride <= s.blocks {
		for lo := range s.stride {
			count += floorSum(s.blocks, gpn, b, s.offset+lo+span) - floorSum(s.blocks, gpn, b, s.offset+lo)
		}
	} else {
		// bad(x) counts the t in [0, x) with t mod gpn >= low.
		bad := func(x int) int { return x/gpn*span + max(0, x%gpn-low) }
		for hi := range s.blocks {
			u := s.offset + hi*b
			count += bad(u+s.stride) - bad(u)
		}
	}
	if count == 0 {
		return 0, -1
	}
	// The groups of one hi cover [u, u+reach]; one of them crosses exactly
	// when that range holds a node boundary past u.
	reach := span + s.stride - 1
	hi := 0
	if reach < gpn {
		hits := func(n int) int { // the hi < n whose groups cross
			return floorSum(n, gpn, b, s.offset+reach) - floorSum(n, gpn, b, s.offset)
		}
		lo, up := 1, s.blocks // the smallest n with hits(n) > 0 is in [lo, up]
		for lo < up {
			mid := lo + (up-lo)/2
			if hits(mid) > 0 {
				up = mid
			} else {
				lo = mid + 1
			}
		}
		hi = lo - 1
	}
	r := (s.offset + hi*b) % gpn
	return count, hi*s.stride + max(0, low-r)
}

// floorSum returns the sum of (a*i+b)/m, rounded down, over 0 <= i < n,
// for n >= 0, m >= 1, a >= 0 and b >= 0, in O(log m) steps (the
// Euclid-like reduction of AtCoder Library's floor_sum). The arguments of
// the locality rule keep every intermediate value below 2^50.
func floorSum(n, m, a, b int) int {
	sum := 0
	for {
		if a >= m {
			sum += (n - 1) * n / 2 * (a / m)
			a %= m
		}
		if b >= m {
			sum += n * (b / m)
			b %= m
		}
		yMax := a*n + b
		if yMax < m {
			return sum
		}
		n, b, m, a = yMax/m, yMax%m, a, m
	}
}
