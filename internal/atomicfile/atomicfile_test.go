package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func text(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// Plan and topology are written together or not at all: a target that
// cannot be written stops the others before any is touched.
func TestWriteFilesTogether(t *testing.T) {
	dir := t.TempDir()
	topo, plan := filepath.Join(dir, "t.json"), filepath.Join(dir, "plan.sh")
	require.NoError(t, os.WriteFile(topo, []byte("old"), 0o644))

	err := WriteFiles(File{topo, 0o644, text("new")}, File{filepath.Join(dir, "nodir", "plan.sh"), 0o755, text("#!")})
	assert.ErrorContains(t, err, "no such file")
	b, _ := os.ReadFile(topo)
	assert.Equal(t, "old", string(b), "the topology is untouched")
	assert.Equal(t, []string{"t.json"}, names(t, dir), "no temporary file left")

	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	err = WriteFiles(File{plan, 0o755, text("#!")}, File{sub, 0o644, text("x")})
	assert.ErrorContains(t, err, "is a directory")
	assert.NoFileExists(t, plan, "checked before anything is written")

	failing := func(io.Writer) error { return errors.New("boom") }
	err = WriteFiles(File{topo, 0o644, text("new")}, File{plan, 0o755, failing})
	assert.ErrorContains(t, err, "boom")
	b, _ = os.ReadFile(topo)
	assert.Equal(t, "old", string(b))
	assert.Equal(t, []string{"sub", "t.json"}, names(t, dir))

	require.NoError(t, WriteFiles(File{topo, 0o644, text("new")}, File{plan, 0o755, text("#!")}))
	b, _ = os.ReadFile(topo)
	assert.Equal(t, "new", string(b))
	st, err := os.Stat(plan)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm())
}

// A symbolic link is refused, whatever it leads to (a write through it
// would replace, and chmod, a file anywhere); so are a directory, a
// device, a FIFO (which would block), a read-only file and the command's
// own input. Nothing is written in any case.
func TestWriteFileRefuses(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real", "plan.sh")
	require.NoError(t, os.Mkdir(filepath.Dir(real), 0o755))
	require.NoError(t, os.WriteFile(real, []byte("old"), 0o644))
	link := filepath.Join(dir, "plan.sh")
	require.NoError(t, os.Symlink(real, link))
	dangling := filepath.Join(dir, "dangling.sh")
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere", "x"), dangling))
	readOnly := filepath.Join(dir, "ro.sh")
	require.NoError(t, os.WriteFile(readOnly, []byte("keep"), 0o444))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, mkfifo(fifo))
	for path, want := range map[string]string{
		link: "a symbolic link", dangling: "a symbolic link", filepath.Dir(real): "is a directory",
		os.DevNull: "not a regular file", fifo: "not a regular file", readOnly: "read-only",
	} {
		assert.ErrorContains(t, WriteFile(path, 0o755, text("new")), want, path)
	}
	b, _ := os.ReadFile(real)
	assert.Equal(t, "old", string(b))
	st, err := os.Stat(real)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "the link's target keeps its mode")
	b, _ = os.ReadFile(readOnly)
	assert.Equal(t, "keep", string(b))

	spec := filepath.Join(dir, "spec.yaml")
	require.NoError(t, os.WriteFile(spec, []byte("spec"), 0o644))
	err = WriteFilesNotOver([]string{spec}, File{Path: filepath.Join(dir, ".", "spec.yaml"), Mode: 0o644, Write: text("layout")})
	assert.ErrorContains(t, err, "this command's input")
	b, _ = os.ReadFile(spec)
	assert.Equal(t, "spec", string(b))
	require.NoError(t, WriteFilesNotOver([]string{spec, "-", ""}, File{Path: filepath.Join(dir, "out.yaml"), Mode: 0o644, Write: text("layout")}))
}

// deadPID returns the pid of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

func TestStaleTempsRemoved(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no process check")
	}
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.sh")
	dead, alive := tmpName(plan, deadPID(t)), tmpName(plan, os.Getppid())
	other := tmpName(filepath.Join(dir, "other.sh"), deadPID(t))
	foreign := filepath.Join(dir, ".plan.sh-123456")
	for _, f := range []string{dead, alive, other, foreign} {
		require.NoError(t, os.WriteFile(f, []byte("partial"), 0o755))
	}
	require.NoError(t, WriteFile(plan, 0o755, text("#!")))
	assert.NoFileExists(t, dead, "a dead run's leftover is removed")
	assert.FileExists(t, alive, "a running process's file is left alone")
	assert.FileExists(t, other, "another target's files are left alone")
	assert.FileExists(t, foreign, "names mimoplan does not make are left alone")
}

// The real case: a writer killed with SIGKILL in the middle of a write
// leaves nothing on Linux (its file has no name yet); elsewhere it leaves
// its temporary file, which the next write of the target removes.
func TestKilledWriterLeftoverRemoved(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL")
	}
	if path := os.Getenv("MIMOPLAN_TEST_WRITER"); path != "" {
		_ = WriteFile(path, 0o755, func(w io.Writer) error {
			io.WriteString(w, strings.Repeat("half a plan\n", 1000))
			w.(*bufio.Writer).Flush()
			fmt.Println("writing")
			select {} // until killed
		})
		return
	}
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.sh")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterLeftoverRemoved$")
	cmd.Env = append(os.Environ(), "MIMOPLAN_TEST_WRITER="+plan)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "writing\n", line)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	left := tmpName(plan, cmd.Process.Pid)
	assert.NoFileExists(t, plan)
	if runtime.GOOS == "linux" {
		// The temporary file had no name (O_TMPFILE): nothing is left.
		assert.Empty(t, names(t, dir), "kill -9 leaves nothing behind")
		return
	}
	assert.FileExists(t, left, "kill -9 leaves the temporary file")
	require.NoError(t, WriteFile(plan, 0o755, text("#!")))
	assert.NoFileExists(t, left)
	assert.Equal(t, []string{"plan.sh"}, names(t, dir))
	assert.True(t, strings.HasPrefix(filepath.Base(left), ".plan.sh."+strconv.Itoa(cmd.Process.Pid)))
}

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
