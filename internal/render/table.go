package render

import (
	"bufio"
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// DefaultWidth is the width tables fit when the caller gives none: that of
// a classic terminal.
const DefaultWidth = 80

// tableOptions are the options of every small table: the box style for
// "text" and GitHub-flavoured Markdown for "markdown". Cells never wrap by
// themselves: the caller cuts long cells into lines, which tablewriter
// prints as a multi-line row (a names cell ends a line
// with " =" when it goes on, so rows need no rule between them). right marks the columns aligned right
// (numbers).
func tableOptions(format string, right []bool) []tablewriter.Option {
	align := make([]tw.Align, len(right))
	for i, r := range right {
		align[i] = tw.AlignLeft
		if r {
			align[i] = tw.AlignRight
		}
	}
	opts := []tablewriter.Option{
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{Global: tw.AlignLeft, PerColumn: align}),
	}
	if format == "markdown" {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	return opts
}

// writeTable renders a small table (a module's folded groups, one rank's
// groups) with tablewriter. A cell may hold several lines.
func writeTable(w *bufio.Writer, format string, header []string, right []bool, rows [][]string) error {
	tb := tablewriter.NewTable(w, tableOptions(format, right)...)
	tb.Header(header)
	for _, r := range rows {
		if err := tb.Append(r); err != nil {
			return err
		}
	}
	return tb.Render()
}

// streamTable writes a table of any length row by row, in the same box or
// Markdown style as tablewriter, with the column widths fixed up front.
// It is the --full tables' writer: tablewriter costs 10-50 µs a row, which
// is 6-25 s for the 131,072-rank tables; this costs the bytes it writes.
// Cells are byte slices that the caller refills for each row (Cells), so
// that a row allocates nothing. The last column may be longer than its
// width: Row cuts it at spaces into continuation rows.
type streamTable struct {
	w        *bufio.Writer
	markdown bool
	widths   []int
	right    []bool
	cells    [][]byte // the caller's row, refilled each time
	empty    [][]byte // a continuation row: every cell empty
}

func newStreamTable(w *bufio.Writer, format string, header []string, widths []int, right []bool) *streamTable {
	s := &streamTable{w: w, markdown: format == "markdown", widths: make([]int, len(widths)), right: right,
		cells: make([][]byte, len(widths)), empty: make([][]byte, len(widths))}
	hs := make([][]byte, len(header))
	for i, n := range widths {
		s.widths[i] = max(n, utf8.RuneCountInString(header[i]))
		hs[i] = []byte(header[i])
	}
	if s.markdown {
		s.line(hs, nil)
		s.w.WriteByte('|')
		// The dashes are written, not built: a column of a rank's --full
		// groups may be 100 MB wide.
		for i, n := range s.widths {
			if right[i] {
				s.dashes(n + 1)
				s.w.WriteString(":|")
			} else {
				s.w.WriteByte(':')
				s.dashes(n + 1)
				s.w.WriteByte('|')
			}
		}
		s.w.WriteByte('\n')
		return s
	}
	s.rule("┌", "┬", "┐")
	s.line(hs, nil)
	s.rule("├", "┼", "┤")
	return s
}

func (s *streamTable) rule(left, mid, right string) {
	s.w.WriteString(left)
	for i, n := range s.widths {
		if i > 0 {
			s.w.WriteString(mid)
		}
		for range n + 2 {
			s.w.WriteString("─")
		}
	}
	s.w.WriteString(right)
	s.w.WriteByte('\n')
}

// line writes one line of cells; right, when given, aligns those columns
// right.
func (s *streamTable) line(cells [][]byte, right []bool) {
	s.cells0(cells, right)
	s.w.WriteByte('\n')
}

// lineWith is line for cells and a last cell of n characters that write
// writes: a cell too long to hold (a group of millions of members) is
// streamed.
func (s *streamTable) lineWith(cells [][]byte, right []bool, n int, write func()) {
	s.cells0(cells, right)
	s.w.WriteByte(' ')
	write()
	s.spaces(s.widths[len(cells)] - n)
	s.w.WriteByte(' ')
	s.w.WriteString(s.bar())
	s.w.WriteByte('\n')
}

func (s *streamTable) bar() string {
	if s.markdown {
		return "|"
	}
	return "│"
}

// cells0 writes the opening bar and each cell with the bar after it.
func (s *streamTable) cells0(cells [][]byte, right []bool) {
	bar := s.bar()
	s.w.WriteString(bar)
	for i, c := range cells {
		pad := s.widths[i] - utf8.RuneCount(c)
		s.w.WriteByte(' ')
		if right != nil && right[i] {
			s.spaces(pad)
			s.w.Write(c)
		} else {
			s.w.Write(c)
			s.spaces(pad)
		}
		s.w.WriteByte(' ')
		s.w.WriteString(bar)
	}
}

func (s *streamTable) dashes(n int) {
	for n > len(dashes) {
		s.w.WriteString(dashes)
		n -= len(dashes)
	}
	if n > 0 {
		s.w.WriteString(dashes[:n])
	}
}

const dashes = "----------------------------------------------------------------"

const blanks = "                                                                "

func (s *streamTable) spaces(n int) {
	for n > len(blanks) {
		s.w.WriteString(blanks)
		n -= len(blanks)
	}
	if n > 0 {
		s.w.WriteString(blanks[:n])
	}
}

// Cell returns cell i's buffer emptied, to append the row's text to; set
// it back with SetCell. A slice given to SetCell is the cell's buffer from
// then on: give it only what Cell returned, or a slice no one else holds.
func (s *streamTable) Cell(i int) []byte { return s.cells[i][:0] }

// SetCell stores cell i's text for the next Row.
func (s *streamTable) SetCell(i int, b []byte) { s.cells[i] = b }

// Row writes the cells set since the last row; a last cell wider than its
// column goes on over continuation rows with the other cells empty.
func (s *streamTable) Row() {
	last := len(s.cells) - 1
	text := s.cells[last]
	cells := s.cells
	for {
		piece, rest := cutBytes(text, s.widths[last])
		saved := cells[last]
		cells[last] = piece
		s.line(cells, s.right)
		cells[last] = saved
		if len(rest) == 0 {
			return
		}
		text = rest
		cells = s.empty
	}
}

func (s *streamTable) close() {
	if !s.markdown {
		s.rule("└", "┴", "┘")
	}
}

// cutBytes is cut for a byte slice.
func cutBytes(s []byte, width int) (head, rest []byte) {
	if len(s) <= width {
		return s, nil
	}
	if i := bytes.LastIndexByte(s[:width+1], ' '); i > 0 {
		return s[:i], s[i+1:]
	}
	return s[:width], s[width:]
}

// cut splits s after at most width characters, at a space when there is
// one, and drops that space.
func cut(s string, width int) (head, rest string) {
	if len(s) <= width {
		return s, ""
	}
	if i := strings.LastIndexByte(s[:width+1], ' '); i > 0 {
		return s[:i], s[i+1:]
	}
	return s[:width], s[width:]
}

// boxOverhead is the width a table's rules and padding take for n columns.
func boxOverhead(n int) int { return 3*n + 1 }
