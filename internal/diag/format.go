package diag

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mimoplan/mimoplan/internal/safetext"
)

// WriteText prints diagnostics the way a compiler does:
//
//	layout.yaml:12:5: error: tp must be positive [invalid-value]
//	    hint: set tp to 1 or more
func WriteText(w io.Writer, l *List) error {
	for _, d := range l.Items {
		var b strings.Builder
		// Text from input (the file name, values in messages) is shown
		// by safetext's rule: no line it starts or ends.
		b.WriteString(location(safetext.Text(l.File), d))
		fmt.Fprintf(&b, ": %s: ", d.Severity)
		if d.Module != "" {
			fmt.Fprintf(&b, "module %q: ", d.Module)
		}
		fmt.Fprintf(&b, "%s [%s]\n", safetext.Inline(d.Message), d.Rule)
		if d.Hint != "" {
			fmt.Fprintf(&b, "    hint: %s\n", safetext.Inline(d.Hint))
		}
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

func location(file string, d Diagnostic) string {
	switch {
	case d.Line > 0 && d.Column > 0:
		return fmt.Sprintf("%s:%d:%d", file, d.Line, d.Column)
	case d.Line > 0:
		return fmt.Sprintf("%s:%d", file, d.Line)
	default:
		return file
	}
}

// Report is the JSON shape of one file's validation result.
type Report struct {
	File        string       `json:"file"`
	Valid       bool         `json:"valid"`
	Errors      int          `json:"errors"`
	Warnings    int          `json:"warnings"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	// Notes are derived figures worth showing (micro-batch counts, each
	// encoder's micro-batch); absent when there are none.
	Notes []string `json:"notes,omitempty"`
}

// NewReport summarises l. strict turns warnings into a failed result.
func NewReport(l *List, strict bool) Report {
	e, w := l.Count()
	items := l.Items
	if items == nil {
		items = []Diagnostic{}
	}
	return Report{
		File:        l.File,
		Valid:       l.Valid(strict),
		Errors:      e,
		Warnings:    w,
		Diagnostics: items,
		Notes:       l.Notes,
	}
}

// WriteJSON prints one report as a single line of JSON, so that several
// files make a JSON Lines stream and one file makes one JSON document.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
