// Package atomicfile writes files so that no reader ever sees half of
// one: whole or not at all, several together (a plan and its topology).
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// File is one file of a set that WriteFiles writes together.
type File struct {
	Path  string
	Mode  os.FileMode
	Write func(io.Writer) error
}

// WriteFile writes one file atomically; see WriteFiles.
func WriteFile(path string, mode os.FileMode, write func(io.Writer) error) error {
	return WriteFiles(File{Path: path, Mode: mode, Write: write})
}

// WriteFiles writes files together or not at all; see WriteFilesNotOver.
func WriteFiles(files ...File) error {
	return WriteFilesNotOver(nil, files...)
}

// WriteFilesNotOver writes files together or not at all, none of them over
// one of inputs (the command's own input files: suggest --out spec.yaml
// must not replace its spec). Every target is checked first: a directory,
// a symbolic link (mimoplan writes no file through a link: the link's
// target may be anything, anywhere), anything else that is not a regular
// file (a FIFO, a device) and a read-only file are refused. Then each file
// is written to a temporary file in its target's directory, synced and
// given its mode; only when all of them are complete are they renamed
// over their targets. On any error before the renames every temporary
// file is removed and no target is touched, so that no reader ever sees
// half a plan, or a plan without its topology.
//
// On Linux a temporary file has no name (O_TMPFILE) until the moment
// before its rename, so a run killed while writing (kill -9) leaves
// nothing behind. Elsewhere, or where the file system has no O_TMPFILE, it
// is named .BASE.PID.mimoplan-tmp from the start; a run killed before its
// renames leaves it, and the next write of the same target removes those
// whose process no longer runs.
func WriteFilesNotOver(inputs []string, files ...File) (err error) {
	for _, f := range files {
		if err := checkTarget(f.Path); err != nil {
			return err
		}
		for _, in := range inputs {
			if in != "" && in != "-" && SameFile(f.Path, in) {
				return fmt.Errorf("write %s: it is this command's input %s: give another file", f.Path, in)
			}
		}
	}
	st := make([]*staged, 0, len(files))
	defer func() {
		for _, s := range st {
			s.discard()
		}
	}()
	for _, f := range files {
		s, err := stage(f)
		if err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
		st = append(st, s)
	}
	for i, f := range files {
		if err := st[i].commit(f.Path); err != nil {
			// Only a rename that races another process can fail here:
			// the targets were checked and the temporary files sit in
			// their directories. Those renamed already stay.
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
	}
	return nil
}

// checkTarget refuses what a write of path must not replace.
func checkTarget(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("write %s: a symbolic link, which mimoplan does not write through: give the file itself", path)
	case st.IsDir():
		return fmt.Errorf("write %s: is a directory; give a file name", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("write %s: not a regular file (%s), which cannot be replaced atomically", path, st.Mode().Type())
	case st.Mode().Perm()&0o222 == 0 || !writable(path):
		return fmt.Errorf("write %s: the file is read-only: make it writable (chmod u+w) or give another file", path)
	}
	return nil
}

// tmpSuffix ends every temporary file name.
const tmpSuffix = ".mimoplan-tmp"

// tmpName is the temporary file of target for process pid.
func tmpName(target string, pid int) string {
	dir, base := filepath.Split(target)
	return filepath.Join(dir, "."+base+"."+strconv.Itoa(pid)+tmpSuffix)
}

// staged is a file written and synced, not yet in place: anonymous
// (O_TMPFILE, named only by commit) or under its temporary name.
type staged struct {
	f    *os.File // the anonymous file, nil once named
	dir  string
	tmp  string // the temporary name, "" while anonymous
	done bool
}

// stage writes f completely into its target's directory.
func stage(f File) (*staged, error) {
	dir := filepath.Dir(f.Path)
	removeStale(f.Path)
	if out, ok := openAnonymous(dir); ok {
		s := &staged{f: out, dir: dir}
		if err := fill(out, f); err != nil {
			s.discard()
			return nil, err
		}
		return s, nil
	}
	tmp := tmpName(f.Path, os.Getpid())
	// Ours by name: a leftover of an earlier process with our pid.
	os.Remove(tmp)
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	err = fill(out, f)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return &staged{dir: dir, tmp: tmp}, nil
}

// commit puts the staged file in place of path: an anonymous one is named
// first (the only moment it has a temporary name), then renamed.
func (s *staged) commit(path string) error {
	if s.f != nil {
		tmp := tmpName(path, os.Getpid())
		os.Remove(tmp)
		err := linkAnonymous(s.f, tmp)
		s.f.Close()
		s.f = nil
		if err != nil {
			return err
		}
		s.tmp = tmp
	}
	if err := os.Rename(s.tmp, path); err != nil {
		return err
	}
	s.done = true
	return nil
}

// discard removes what commit did not put in place.
func (s *staged) discard() {
	if s.f != nil {
		s.f.Close() // an anonymous file goes with its last descriptor
		s.f = nil
	}
	if s.tmp != "" && !s.done {
		os.Remove(s.tmp)
	}
}

func fill(out *os.File, f File) error {
	bw := bufio.NewWriter(out)
	if err := f.Write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := out.Chmod(f.Mode); err != nil {
		return err
	}
	return out.Sync()
}

// removeStale removes the temporary files of target left by processes
// that no longer run. Errors are ignored: a leftover is only clutter.
func removeStale(target string) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := "." + base + "."
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, tmpSuffix) {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, prefix), tmpSuffix))
		if err != nil || pid <= 0 || pid == os.Getpid() || processRuns(pid) {
			continue
		}
		os.Remove(filepath.Join(dir, name))
	}
}

// SameFile reports whether two paths name one file: the same clean
// absolute path, or, where both exist, the same file through links.
func SameFile(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	stA, errA := os.Stat(a)
	stB, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(stA, stB)
}
