//go:build !unix

package launch

// processRuns cannot tell here, so every leftover is kept.
func processRuns(int) bool { return true }
