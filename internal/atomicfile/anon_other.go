//go:build !linux

package atomicfile

import (
	"errors"
	"os"
)

// openAnonymous: no O_TMPFILE here; temporary files are named.
func openAnonymous(string) (*os.File, bool) { return nil, false }

func linkAnonymous(*os.File, string) error { return errors.New("no anonymous files") }
