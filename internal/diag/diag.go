// Package diag defines the positioned diagnostics that every mimoplan check
// produces, and the stable rule catalogue they refer to.
package diag

import (
	"cmp"
	"fmt"
	"slices"
)

// Severity of a diagnostic. Errors make a layout invalid; warnings do not,
// unless the caller asks for strictness.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Note    Severity = "note"
)

// Diagnostic is one finding about one input file (the List's).
type Diagnostic struct {
	// Rule is a RuleID's text.
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Hint says what would fix the problem; may be empty.
	Hint   string `json:"hint,omitempty"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	// Module is the module the diagnostic is about; "" for the layout as
	// a whole. Always in JSON, so that every diagnostic has the same keys.
	Module string `json:"module"`
}

// Pos is a 1-based line and column in a source file. The zero Pos means
// "no position" (the diagnostic is about the file as a whole).
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// List collects diagnostics for one file.
type List struct {
	File  string
	Items []Diagnostic
	// Notes are derived figures worth showing beside the diagnostics
	// (micro-batch counts); the text and JSON formats print them.
	Notes []string
	// Summary says what a valid file describes, for the verdict line:
	// "non_colocated, 8 ranks, target core: vision [0, 4), language [4, 8)".
	Summary string
}

// Add appends a diagnostic at pos. The rule must be in the catalogue; its
// default severity is used.
func (l *List) Add(rule RuleID, pos Pos, module, hint, format string, args ...any) {
	l.AddSeverity(SeverityOf(rule), rule, pos, module, hint, format, args...)
}

// AddSeverity is Add with an explicit severity.
func (l *List) AddSeverity(sev Severity, rule RuleID, pos Pos, module, hint, format string, args ...any) {
	l.Items = append(l.Items, Diagnostic{
		Rule:     string(rule),
		Severity: sev,
		Message:  fmt.Sprintf(format, args...),
		Hint:     hint,
		Line:     pos.Line,
		Column:   pos.Column,
		Module:   module,
	})
}

// Append adds already-built diagnostics.
func (l *List) Append(ds ...Diagnostic) { l.Items = append(l.Items, ds...) }

// Count returns the number of errors and warnings.
func (l *List) Count() (errors, warnings int) {
	for _, d := range l.Items {
		switch d.Severity {
		case Error:
			errors++
		case Warning:
			warnings++
		}
	}
	return errors, warnings
}

// HasErrors reports whether any diagnostic is an error.
func (l *List) HasErrors() bool {
	e, _ := l.Count()
	return e > 0
}

// Sort orders diagnostics by line, column and rule id, keeping the order
// of equal ones, so that the output does not depend on the order the
// checks ran in.
func (l *List) Sort() {
	slices.SortStableFunc(l.Items, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Rule, b.Rule))
	})
}
