//go:build !unix

package atomicfile

import "os"

// processRuns cannot tell here, so every leftover is kept.
func processRuns(int) bool { return true }

// writable reads the mode's owner write bit.
func writable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().Perm()&0o200 != 0
}
