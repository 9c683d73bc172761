//go:build unix

package atomicfile

import (
	"errors"
	"syscall"
)

// processRuns reports whether a process with this pid exists (signal 0
// checks without sending; EPERM means it runs as another user).
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// writable reports whether this process may write the file at path.
func writable(path string) bool {
	return syscall.Access(path, 2 /* W_OK */) == nil
}
