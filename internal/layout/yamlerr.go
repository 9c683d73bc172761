package layout

// The YAML document: syntax errors placed where the problem is.

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/diag"
)

func (p *parser) document(data []byte) (n *yaml.Node, ok bool) {
	start := diag.Pos{Line: 1, Column: 1}
	switch {
	case len(data) > MaxFileSize:
		p.d.Add(diag.RuleYAMLSyntax, start, "", "split the layout or remove what is not a layout", "file is larger than %d bytes; a layout is a few hundred", MaxFileSize)
		return nil, false
	case !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0:
		p.d.Add(diag.RuleYAMLSyntax, start, "", "a layout is YAML text: check that the right file was given", "file is not UTF-8 text")
		return nil, false
	}
	defer func() {
		// The YAML library is not ours; whatever it does with hostile input
		// must end as a diagnostic, never a crash.
		if r := recover(); r != nil {
			p.d.Add(diag.RuleYAMLSyntax, start, "", "", "cannot parse YAML: %v", r)
			n, ok = nil, false
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.d.Add(diag.RuleYAMLSyntax, start, "", "start from a layout in layouts/ or docs/layout.md", "file is empty")
		} else {
			p.d.Add(diag.RuleYAMLSyntax, errorPos(err, data), "", "", "%s", yamlMessage(err))
		}
		return nil, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		var pos diag.Pos
		if err == nil {
			pos = nodePos(&extra)
		} else {
			pos = errorPos(err, data)
		}
		p.d.Add(diag.RuleYAMLSyntax, pos, "", "keep one layout per file, without a second '---'", "file holds more than one YAML document")
		return nil, false
	}
	if len(doc.Content) == 0 {
		p.d.Add(diag.RuleYAMLSyntax, start, "", "start from a layout in layouts/ or docs/layout.md", "file is empty")
		return nil, false
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		p.d.Add(diag.RuleYAMLSyntax, nodePos(root), "", "a layout starts with 'version: 1' and has keys such as world_size and modules", "layout must be a YAML mapping, got %s", describe(root))
		return nil, false
	}
	return root, true
}

// errorPos extracts the line (and column, where given) from a YAML error.
// yaml.v3 counts lines from 0 in its parser's errors ("did not find
// expected ...") and from 1 in its scanner's, and gives no line at all for
// an unknown anchor, which is then found in the text.
func errorPos(err error, data []byte) diag.Pos {
	msg := err.Error()
	if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			return offsetPos(data, i)
		}
	}
	if strings.Contains(msg, "control characters are not allowed") {
		if i := bytes.IndexFunc(data, forbidden); i >= 0 {
			return offsetPos(data, i)
		}
	}
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return diag.Pos{Line: 1, Column: 1}
	}
	line, _ := strconv.Atoi(m[1])
	col := 1
	if m[2] != "" {
		col, _ = strconv.Atoi(m[2])
	}
	if strings.Contains(msg, "did not find expected") {
		// A parser error gives the 0-based line of the collection the
		// problem is in, not of the problem.
		line++
		if p := problemLine(data, line); p > line {
			line = p
		}
		col = firstColumn(data, line)
	}
	return diag.Pos{Line: max(line, 1), Column: max(col, 1)}
}

// offsetPos is the line and column (in characters, as yaml.v3 counts
// them) of byte offset i.
func offsetPos(data []byte, i int) diag.Pos {
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	return diag.Pos{Line: bytes.Count(data[:i], []byte("\n")) + 1, Column: utf8.RuneCount(data[start:i]) + 1}
}

// forbidden reports the characters YAML does not allow in a stream: C0
// and C1 controls other than tab, line feed, carriage return and NEL,
// DEL, and U+FFFE/U+FFFF.
func forbidden(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0xfffe || r == 0xffff:
		return true
	}
	return false
}

// maxRefine bounds the text problemLine searches: real layouts are a few
// hundred bytes, and each step parses a prefix.
const maxRefine = 128 << 10

// problemLine returns the first line, from line from on, at which the text
// stops being YAML that parses: the line of a parser error that yaml.v3
// reports at the start of its collection. It returns 0 when it cannot tell.
func problemLine(data []byte, from int) int {
	if len(data) > maxRefine {
		return 0
	}
	ends := []int{} // ends[k-1] is the offset just past line k
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	fails := func(k int) bool {
		var n yaml.Node
		err := yaml.NewDecoder(bytes.NewReader(data[:ends[k-1]])).Decode(&n)
		return err != nil && !errors.Is(err, io.EOF)
	}
	lo, hi := max(from, 1), len(ends)
	if lo > hi || !fails(hi) {
		return 0
	}
	for lo < hi { // the smallest failing prefix, if failing is monotonic
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// firstColumn is the column of the first character on a line that is not
// a space or a tab.
func firstColumn(data []byte, line int) int {
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return 1
		}
		data = data[i+1:]
	}
	for i, c := range data {
		if c != ' ' && c != '\t' {
			return i + 1
		}
	}
	return 1
}

// yamlMessage drops the library's prefix and the position, which the
// diagnostic already carries.
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if loc := yamlLine.FindStringIndex(msg); loc != nil && loc[0] == 0 {
		msg = msg[loc[1]:]
	}
	return msg
}
