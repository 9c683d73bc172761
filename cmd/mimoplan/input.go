package main

import (
	"github.com/spf13/cobra"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/upstream"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// loadLayout reads and checks one layout: a regular file, or standard
// input for "-". The error is for input that cannot be read.
// tv, when not nil, replaces the layout's target_version.
func loadLayout(cmd *cobra.Command, path string, tv *upstream.Version) (*validate.Result, error) {
	return validate.LoadFrom(path, cmd.InOrStdin(), tv)
}

// stdinOnce refuses "-" given more than once: standard input can be read
// only once, and a second read would see an empty layout.
func stdinOnce(paths []string) error {
	n := 0
	for _, p := range paths {
		if p == layout.Stdin {
			n++
		}
	}
	if n > 1 {
		return usageErr("'-' (standard input) is given %d times: it can be read once", n)
	}
	return nil
}
