package cmdutil

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/term"
)

// TerminalWidth is the width tables fit: COLUMNS when set to a number,
// else the terminal's when w is one, else fallback.
func TerminalWidth(w io.Writer, fallback int) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if n, _, err := term.GetSize(int(f.Fd())); err == nil && n > 0 {
			return n
		}
	}
	return fallback
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
