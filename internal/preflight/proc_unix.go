//go:build unix

package preflight

import (
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup starts the launcher in a process group of its own, so
// that a signal for this process's group (Ctrl-C at a terminal, timeout(1))
// reaches torchrun once, through Run, and not a second time in the middle
// of its shutdown, which would cut that shutdown short.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalled is the signal that ended the process, if one did.
func signalled(ps *os.ProcessState) (syscall.Signal, bool) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return ws.Signal(), true
}
