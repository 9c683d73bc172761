package plan

// maxEntries bounds each memo of the search: past it the memo starts
// afresh, so that memory stays bounded at any cluster size.
const maxEntries = 1 << 19

// maxBoundEntries bounds the factorizations the bounds keep (bound.go).
const maxBoundEntries = 1 << 15

// memo is a map that forgets everything once it holds maxEntries: an
// entry weighs what put says (a list of factorizations, its length).
type memo[K comparable, V any] struct {
	m map[K]V
	n int
	// most is the weight it holds at most (0: maxEntries).
	most int
}

func (c *memo[K, V]) get(k K) (V, bool) {
	v, ok := c.m[k]
	return v, ok
}

func (c *memo[K, V]) put(k K, v V, weight int) {
	if c.m == nil {
		c.m = map[K]V{}
	}
	most := c.most
	if most == 0 {
		most = maxEntries
	}
	if c.n+weight > most {
		c.reset()
	}
	c.m[k] = v
	c.n += weight
}

func (c *memo[K, V]) reset() {
	clear(c.m)
	c.n = 0
}
