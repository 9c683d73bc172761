package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.sh")
	require.NoError(t, WriteFile(path, 0o755, func(w io.Writer) error {
		_, err := io.WriteString(w, "#!/bin/sh\n")
		return err
	}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "#!/bin/sh\n", string(b))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm())

	// A write that fails half way leaves the old plan and no temporary file.
	err = WriteFile(path, 0o755, func(w io.Writer) error {
		if _, err := io.WriteString(w, strings.Repeat("half a plan\n", 10000)); err != nil {
			return err
		}
		return errors.New("boom")
	})
	require.ErrorContains(t, err, "boom")
	b, _ = os.ReadFile(path)
	assert.Equal(t, "#!/bin/sh\n", string(b), "the old plan is untouched")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file is left behind")

	fresh := filepath.Join(dir, "new.json")
	require.Error(t, WriteFile(fresh, 0o644, func(io.Writer) error { return errors.New("boom") }))
	assert.NoFileExists(t, fresh)
	entries, _ = os.ReadDir(dir)
	assert.Len(t, entries, 1)

	assert.ErrorContains(t, WriteFile(filepath.Join(dir, "no", "such", "dir.sh"), 0o755, func(io.Writer) error { return nil }), "no such file")
	// Over a directory: the rename fails and the directory stays.
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	assert.Error(t, WriteFile(sub, 0o644, func(io.Writer) error { return nil }))
	assert.DirExists(t, sub)
	entries, _ = os.ReadDir(dir)
	assert.Len(t, entries, 2)
}

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	a := filepath.Join(dir, "a.yaml")
	require.NoError(t, os.WriteFile(a, nil, 0o644))
	require.NoError(t, os.Symlink(a, filepath.Join(dir, "link.yaml")))
	require.NoError(t, os.Link(a, filepath.Join(dir, "hard.yaml")))
	tests := []struct {
		a, b string
		want bool
	}{
		{a, "a.yaml", true},
		{"a.yaml", "./sub/../a.yaml", true},
		{"link.yaml", a, true},
		{"hard.yaml", "a.yaml", true},
		{"new.json", "./new.json", true}, // neither exists yet: by path
		{"a.yaml", "new.json", false},
		{"new.json", "other.json", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, SameFile(tt.a, tt.b), "%s, %s", tt.a, tt.b)
	}
}
