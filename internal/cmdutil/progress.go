package cmdutil

import (
	"fmt"
	"io"
	"sync"
	"time"
)

const (
	// progressAfter is how long a search runs before its progress line
	// shows: a quick one prints nothing.
	progressAfter = time.Second
	// progressEvery spaces the line's updates, so that a fast search does
	// not spend its time writing to the terminal.
	progressEvery = 100 * time.Millisecond
	// progressLineEvery spaces the lines written off a terminal
	// (--progress), each a line of its own in a log.
	progressLineEvery = 10 * time.Second
)

// Progress returns, when w is a terminal, a report that shows "mimoplan: N
// layouts checked, M search nodes ..." on one line once a second has passed, and a done that
// clears that line; otherwise report is nil and done does nothing.
func Progress(w io.Writer) (report func(checked, nodes int), done func()) {
	return progressLine(w, IsTerminal(w), time.Now)
}

// ProgressLines returns a report that writes "mimoplan: N layouts checked,
// M search nodes after S s ..." as a line of its own once a second has passed and then every ten
// seconds, terminal or not (suggest --progress, for a log or CI).
func ProgressLines(w io.Writer) (report func(checked, nodes int), done func()) {
	return progressLines(w, time.Now)
}

func progressLines(w io.Writer, now func() time.Time) (report func(checked, nodes int), done func()) {
	return throttled(now, progressLineEvery, func(n, nodes int, elapsed time.Duration) {
		fmt.Fprintf(w, "mimoplan: %d layouts checked, %d search nodes after %.0f s ...\n", n, nodes, elapsed.Seconds())
	}, nil)
}

// progressLine is Progress with the terminal test and the clock given.
// report and done may be called from different goroutines; nothing is
// written once done has been called.
func progressLine(w io.Writer, terminal bool, now func() time.Time) (report func(checked, nodes int), done func()) {
	if !terminal {
		return nil, func() {}
	}
	return throttled(now, progressEvery, func(n, nodes int, _ time.Duration) {
		fmt.Fprintf(w, "\rmimoplan: %d layouts checked, %d search nodes ...", n, nodes)
	}, func() { fmt.Fprint(w, "\r\033[K") })
}

// throttled calls write once progressAfter has passed since it was made
// and then at most once every every; done stops it, calling clear first
// when something was written. Both may be called from different
// goroutines.
func throttled(now func() time.Time, every time.Duration, write func(n, nodes int, elapsed time.Duration), clear func()) (report func(checked, nodes int), done func()) {
	var (
		mu      sync.Mutex
		start   = now()
		last    time.Time
		shown   bool
		stopped bool
	)
	report = func(n, nodes int) {
		mu.Lock()
		defer mu.Unlock()
		t := now()
		if stopped || t.Sub(start) < progressAfter || shown && t.Sub(last) < every {
			return
		}
		write(n, nodes, t.Sub(start))
		last, shown = t, true
	}
	done = func() {
		mu.Lock()
		defer mu.Unlock()
		if shown && !stopped && clear != nil {
			clear()
		}
		stopped = true
	}
	return report, done
}
