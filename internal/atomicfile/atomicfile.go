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

// WriteFiles writes files together or not at all. Every target is checked
// first: a directory or anything else that is not a regular file is
// refused, and a symbolic link is written through (its target is
// replaced, the link stays) unless it dangles. Then each file is written
// to a temporary file beside its target, synced and given its mode; only
// when all of them are complete are they renamed over their targets. On
// any error before the renames every temporary file is removed and no
// target is touched, so that no reader ever sees half a plan, or a plan
// without its topology.
//
// A temporary file is named .BASE.PID.mimoplan-tmp. A run killed before
// its renames (kill -9) leaves it behind; the next write of the same
// target removes those whose process no longer runs.
func WriteFiles(files ...File) (err error) {
	targets := make([]string, len(files))
	for i, f := range files {
		if targets[i], err = writeTarget(f.Path); err != nil {
			return err
		}
	}
	tmps := make([]string, 0, len(files))
	defer func() {
		if err != nil {
			for _, t := range tmps {
				os.Remove(t)
			}
		}
	}()
	for i, f := range files {
		tmp, err := stage(targets[i], f)
		if err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
		tmps = append(tmps, tmp)
	}
	for i, f := range files {
		if err := os.Rename(tmps[i], targets[i]); err != nil {
			// Only a rename that races another process can fail here:
			// the targets were checked and the temporary files sit in
			// their directories. Those renamed already stay.
			tmps = tmps[i:]
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
	}
	return nil
}

// writeTarget is the file a write of path replaces: path itself, or the
// file a symbolic link at path leads to.
func writeTarget(path string) (string, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	target := path
	if st.Mode()&fs.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return "", fmt.Errorf("write %s: a symbolic link that leads nowhere (%w): give the file itself", path, err)
		}
		if st, err = os.Stat(target); err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
	}
	switch {
	case st.IsDir():
		return "", fmt.Errorf("write %s: is a directory; give a file name", path)
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("write %s: not a regular file (%s), which cannot be replaced atomically", path, st.Mode().Type())
	}
	return target, nil
}

// tmpSuffix ends every temporary file name.
const tmpSuffix = ".mimoplan-tmp"

// tmpName is the temporary file of target for process pid.
func tmpName(target string, pid int) string {
	dir, base := filepath.Split(target)
	return filepath.Join(dir, "."+base+"."+strconv.Itoa(pid)+tmpSuffix)
}

// stage writes f to the temporary file of target, complete and synced.
func stage(target string, f File) (string, error) {
	removeStale(target)
	tmp := tmpName(target, os.Getpid())
	// Ours by name: a leftover of an earlier process with our pid.
	os.Remove(tmp)
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	err = fill(out, f)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
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
