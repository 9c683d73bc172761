//go:build !cgo

package gpuprobe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWithoutCgo(t *testing.T) {
	snap, err := ProbeLocal()
	assert.Nil(t, snap)
	require.Error(t, err)
	assert.True(t, IsUnavailable(err))
	assert.Contains(t, err.Error(), "NVML is unavailable: this mimoplan was built without cgo")
}
