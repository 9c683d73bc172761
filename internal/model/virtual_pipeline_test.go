package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestVirtualPipeline: the virtual pipeline size, given or from a layout's
// stages, and whether the layout's stages divide pp.
func TestVirtualPipeline(t *testing.T) {
	for _, tt := range []struct {
		name       string
		vpp, pp    int
		layoutText string
		want       int
		exact      bool
	}{
		{"absent", 0, 4, "", 0, true},
		{"vpp 1 is none", 1, 4, "", 0, true},
		{"vpp given", 3, 4, "", 3, true},
		{"vpp at pp 1", 2, 1, "", 2, true},
		{"layout of 2 pp stages", 0, 4, "Et|t|t|t|t|t|t|tL", 2, true},
		{"layout of pp stages", 0, 4, "Et|t|t|tL", 0, true},
		{"layout over vpp", 2, 2, "Et|t|t|t|t|tL", 3, true},
		{"layout not a multiple of pp, floor 2", 0, 2, "Et|t|t|t|tL", 2, false},
		{"layout not a multiple of pp, floor 1", 0, 4, "Et|t|t|t|tL", 0, false},
		{"unreadable layout", 2, 2, "Ex|tL", 0, false},
		{"layout at pp 0 counts pp 1", 0, 0, "Et|tL", 2, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, exact := VirtualPipeline(tt.vpp, tt.pp, tt.layoutText)
			assert.Equal(t, tt.want, v)
			assert.Equal(t, tt.exact, exact)
		})
	}
}
