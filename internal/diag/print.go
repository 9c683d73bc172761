package diag

import (
	"fmt"
	"io"
	"strings"

	"github.com/mimoplan/mimoplan/internal/english"

	"github.com/mimoplan/mimoplan/internal/safetext"
)

// Format is an output format of diagnostics.
type Format string

// The formats Print writes.
const (
	FormatText   Format = "text"   // compiler style, with notes and a verdict line per file
	FormatJSON   Format = "json"   // one JSON object per file (JSON Lines)
	FormatGitHub Format = "github" // GitHub Actions workflow commands
	FormatSARIF  Format = "sarif"  // one SARIF 2.1.0 log for every file
)

// Formats lists the formats in the order help texts name them.
func Formats() []string {
	return []string{string(FormatText), string(FormatJSON), string(FormatGitHub), string(FormatSARIF)}
}

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if s == f {
			return Format(s), nil
		}
	}
	return "", fmt.Errorf("unknown diagnostics format %q: want one of %s", s, strings.Join(Formats(), ", "))
}

// Print writes the reports of every file's list in format f. strict counts
// warnings as failures in the verdicts. This is the one entry point the
// commands use; the Write* functions are its printers, one a format.
func Print(w io.Writer, lists []*List, f Format, strict bool) error {
	if f == FormatSARIF {
		return WriteSARIF(w, lists)
	}
	for _, l := range lists {
		if err := printOne(w, l, f, strict); err != nil {
			return err
		}
	}
	return nil
}

func printOne(w io.Writer, l *List, f Format, strict bool) error {
	switch f {
	case FormatJSON:
		return WriteJSON(w, NewReport(l, strict))
	case FormatGitHub:
		// Workflow commands annotate the files; the verdict is ordinary
		// log output for whoever reads the job's log.
		if err := WriteGitHub(w, l); err != nil {
			return err
		}
	case FormatText:
		if err := WriteText(w, l); err != nil {
			return err
		}
		for _, n := range l.Notes {
			if _, err := fmt.Fprintf(w, "%s: note: %s\n", safetext.Text(l.File), safetext.Inline(n)); err != nil {
				return err
			}
		}
	default:
		_, err := ParseFormat(string(f))
		return err
	}
	_, err := fmt.Fprintln(w, l.Verdict(strict))
	return err
}

// Valid reports whether the list has no error (and, when strict, no
// warning).
func (l *List) Valid(strict bool) bool {
	e, w := l.Count()
	return e == 0 && !(strict && w > 0)
}

// Verdict is the one line (the file name as safetext.Text shows it) that ends a file's text report:
// "layout.yaml: invalid: 2 errors" or "layout.yaml: valid: " and the
// Summary, with the warnings counted.
func (l *List) Verdict(strict bool) string {
	e, w := l.Count()
	if !l.Valid(strict) {
		return fmt.Sprintf("%s: invalid: %s", safetext.Text(l.File), counts(e, w))
	}
	s := safetext.Text(l.File) + ": valid"
	if l.Summary != "" {
		s += ": " + safetext.Inline(l.Summary)
	}
	if w > 0 {
		s += " (" + counts(0, w) + ")"
	}
	return s
}

func counts(e, w int) string {
	var parts []string
	if e > 0 {
		parts = append(parts, english.Plural(e, "error"))
	}
	if w > 0 {
		parts = append(parts, english.Plural(w, "warning"))
	}
	if len(parts) == 0 {
		return "no problems"
	}
	return strings.Join(parts, ", ")
}
