package plan

// maxEntries bounds each memo of the search: past it the memo starts
// afresh, so that memory stays bounded at any cluster size.
const maxEntries = 1 << 19

// memo is a map that forgets everything once it holds maxEntries: an
// entry weighs what put says (a list of factorizations, its length).
type memo[K comparable, V any] struct {
	m map[K]V
	n int
}

func (c *memo[K, V]) get(k K) (V, bool) {
	v, ok := c.m[k]
	return v, ok
}

func (c *memo[K, V]) put(k K, v V, weight int) {
	if c.m == nil {
		c.m = map[K]V{}
	}
	if c.n+weight > maxEntries {
		c.reset()
	}
	c.m[k] = v
	c.n += weight
}

func (c *memo[K, V]) reset() {
	clear(c.m)
	c.n = 0
}
