package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A memo forgets everything once its entries' weight would pass
// maxEntries, and not before.
func TestMemoBounded(t *testing.T) {
	var c memo[int, string]
	c.put(1, "a", maxEntries-1)
	c.put(2, "b", 1)
	v, ok := c.get(1)
	assert.True(t, ok)
	assert.Equal(t, "a", v)
	c.put(3, "c", 1) // past the bound: the memo starts afresh
	_, ok = c.get(1)
	assert.False(t, ok)
	v, ok = c.get(3)
	assert.True(t, ok)
	assert.Equal(t, "c", v)
	assert.Equal(t, 1, c.n)
	c.reset()
	_, ok = c.get(3)
	assert.False(t, ok)
}
