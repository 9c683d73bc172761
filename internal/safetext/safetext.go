// Package safetext is the one rule for text that came from input (a
// layout's name, a file name, an hf_config path, a config.json value) and
// is printed in a human-readable output: a terminal, a CI log, Markdown.
// No such text may start a line a CI runner acts on (a GitHub Actions
// workflow command, "::error ...", read after any leading blanks) or carry
// a character a terminal acts on (ESC, another control character, a
// newline). Text shows it unchanged when it is plain, else Go-quoted with
// those characters escaped; Markdown, YAML and XML add their own escapes.
package safetext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Plain reports whether s is shown as it is: valid UTF-8, every rune
// printable (no control or format character, no line or paragraph
// separator, no space but ' '), no "::", and no ':' at either end (where a
// printer's own ':' would make one).
func Plain(s string) bool {
	if !utf8.ValidString(s) || strings.Contains(s, "::") || strings.HasPrefix(s, ":") || strings.HasSuffix(s, ":") {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// Text is s when it is Plain, else s Go-quoted (strconv.Quote escapes
// every rune that is not printable, so the result holds no control
// character), with each "::" written ":\x3a" (which strconv.Unquote reads
// back) so that no cut of it starts a workflow command.
func Text(s string) string {
	if Plain(s) {
		return s
	}
	return strings.ReplaceAll(strconv.Quote(s), "::", `:\x3a`)
}

// Inline is s with every rune that is not printable escaped as
// strconv.Quote escapes it (\n, \x1b, \u0085), without the quotes: for
// text from input in the middle of a line (a diagnostic's message), which
// then cannot end the line or reach a terminal as a control character.
func Inline(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// Markdown is Text with every ASCII punctuation character escaped by a
// backslash (CommonMark reads any such pair as the character itself), so
// that the text can start no HTML tag, link, emphasis or table cell.
func Markdown(s string) string {
	t := Text(s)
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c < utf8.RuneSelf && unicode.IsPunct(rune(c)) || strings.IndexByte("$+<=>^`|~", c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// XML is Text escaped for XML character data and attribute values: no
// character XML 1.0 forbids (Text leaves no control character) and no
// markup.
func XML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(Text(s))
}

// JSONQuote is s as a JSON string (encoding/json's) that is also a
// double-quoted YAML scalar every YAML 1.1 and 1.2 loader reads back as s:
// JSON leaves DEL (not printable in YAML) and the C1 controls (NEL, U+0085,
// is a line break in YAML 1.1) raw, so they are escaped too.
func JSONQuote(s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	if !bytes.ContainsFunc(b, c1OrDEL) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for _, r := range string(b) {
		if c1OrDEL(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
			continue
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

func c1OrDEL(r rune) bool { return r == 0x7f || r >= 0x80 && r <= 0x9f }
