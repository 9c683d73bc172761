package launch

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseHostfile(t *testing.T) {
	h, err := ParseHostfile(strings.NewReader("# the job's nodes\n\nnode-a slots=8\n  node-b   # spare below\n\t10.0.0.3\tslots=8\r\n[fd00::4]\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"node-a", "node-b", "10.0.0.3", "[fd00::4]"}, h.Hosts)
	assert.Equal(t, []int{3, 4, 5, 6}, h.Lines)
	assert.Equal(t, []int{8, 0, 8, 0}, h.Slots)
	assert.NoError(t, h.CheckSlots(8))
	assert.EqualError(t, h.CheckSlots(4), "line 3: host node-a has slots=8, but the layout runs 4 ranks on every node")

	for src, want := range map[string]string{
		"a\nb max_slots=8\n": `line 2: unexpected "max_slots=8" after the host`,
		"a slots=x\n":        "line 1: slots=x is not a positive number",
		"a slots=0\n":        "line 1: slots=0 is not a positive number",
		"a b\n":              `line 1: unexpected "b"`,
	} {
		_, err := ParseHostfile(strings.NewReader(src))
		assert.ErrorContains(t, err, want, src)
	}
	h, err = ParseHostfile(strings.NewReader("# nothing\n"))
	require.NoError(t, err)
	assert.Empty(t, h.Hosts)

	_, err = ParseHostfile(io.MultiReader(strings.NewReader("a\n"), errReader{}))
	assert.ErrorContains(t, err, "read host list")
}

// A host list of any size is read whole: 2,097,152 hosts (29 MB) with the
// last one intact, where a 16 MiB cap once cut it at host 1,398,102.
func TestParseHostfileLarge(t *testing.T) {
	const n = 2 << 20
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "node-%07d slots=8\n", i)
	}
	b.WriteString("last-host") // no newline at the end
	h, err := ParseHostfile(strings.NewReader(b.String()))
	require.NoError(t, err)
	require.Len(t, h.Hosts, n+1)
	assert.Equal(t, "node-2097151", h.Hosts[n-1])
	assert.Equal(t, "last-host", h.Hosts[n])
	assert.Equal(t, n+1, h.Lines[n])
	assert.Equal(t, 0, h.Slots[n])
}

// A line past the limit is refused by its number, never cut.
func TestParseHostfileLongLine(t *testing.T) {
	src := "a\n# " + strings.Repeat("x", maxHostLine) + "\nb\n"
	_, err := ParseHostfile(strings.NewReader(src))
	assert.EqualError(t, err, "line 2: longer than 1048576 bytes: a host list has one host per line")

	// Just under the limit is a line like any other.
	src = "a\n# " + strings.Repeat("x", maxHostLine-3) + "\nb\n"
	h, err := ParseHostfile(strings.NewReader(src))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, h.Hosts)
	assert.Equal(t, []int{1, 3}, h.Lines)
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }
