package cmdutil

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

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

// Progress returns, when w is a terminal, a report that shows "mimoplan: N
// layouts checked ..." on one line once a second has passed, and a done that
// clears that line; otherwise report is nil and done does nothing.
func Progress(w io.Writer) (report func(n int), done func()) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, func() {}
	}
	start := time.Now()
	report = func(n int) {
		if time.Since(start) > time.Second {
			fmt.Fprintf(w, "\rmimoplan: %d layouts checked ...", n)
		}
	}
	done = func() {
		if time.Since(start) > time.Second {
			fmt.Fprint(w, "\r\033[K")
		}
	}
	return report, done
}
