//go:build !unix

package preflight

import (
	"os"
	"os/exec"
	"syscall"
)

func ownProcessGroup(*exec.Cmd) {}

func signalled(*os.ProcessState) (syscall.Signal, bool) { return 0, false }
