//go:build linux

package atomicfile

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openAnonymous opens an unnamed regular file in dir (O_TMPFILE): it
// vanishes with the process unless linkAnonymous names it. false where
// the file system has no O_TMPFILE.
func openAnonymous(dir string) (*os.File, bool) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, false
	}
	return os.NewFile(uintptr(fd), dir), true
}

// linkAnonymous gives the file opened by openAnonymous the name path
// (linkat through /proc/self/fd, which needs no privilege).
func linkAnonymous(f *os.File, path string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: path, Err: err}
	}
	return nil
}
