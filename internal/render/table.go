package render

import (
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// tableOptions are the options of every table: the box style for "table"
// and GitHub-flavoured Markdown for "markdown". Cells never wrap: folding
// and continuation rows are done by the caller, so a row stays one line.
func tableOptions(format string) []tablewriter.Option {
	opts := []tablewriter.Option{
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
	}
	if format == "markdown" {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	return opts
}

// newTable returns a tablewriter v1 table that is rendered at the end: for
// the folded tables, which are small whatever the world.
func newTable(w io.Writer, format string) *tablewriter.Table {
	return tablewriter.NewTable(w, tableOptions(format)...)
}

// wrapWidth is the widest a ranks cell gets in a --full table; a longer
// group goes on over continuation rows. A rendered table pads every row to
// its widest cell, so one 114,688-rank group on a line of its own would
// make every row of its table 800 KB wide.
const wrapWidth = 96

// streamTable is a --full table: tablewriter in streaming mode with the
// column widths fixed up front, so that each row is written as it comes
// and memory does not grow with the rows.
type streamTable struct {
	t *tablewriter.Table
}

// newStreamTable starts a streamed table. widths holds the widest content
// of each column, header included: no cell may be wider, since a streamed
// table truncates what does not fit.
func newStreamTable(w io.Writer, format string, header []string, widths []int) (*streamTable, error) {
	per := tw.NewMapper[int, int]()
	for i, n := range widths {
		per.Set(i, max(n, len(header[i]))+2) // one space of padding each side
	}
	opts := append(tableOptions(format),
		tablewriter.WithStreaming(tw.StreamConfig{Enable: true}),
		tablewriter.WithWidths(tw.CellWidth{PerColumn: per}))
	t := tablewriter.NewTable(w, opts...)
	if err := t.Start(); err != nil {
		return nil, err
	}
	t.Header(header)
	return &streamTable{t: t}, nil
}

// row writes one row. The last cell may be long: it is cut at spaces into
// pieces of at most wrapWidth characters, each after the first on a row of
// its own with the other cells empty.
func (s *streamTable) row(cells ...string) error {
	last := len(cells) - 1
	text := cells[last]
	for {
		piece, rest := cut(text, wrapWidth)
		cells[last] = piece
		if err := s.t.Append(cells); err != nil {
			return err
		}
		if rest == "" {
			return nil
		}
		text = rest
		cells = make([]string, len(cells))
	}
}

func (s *streamTable) close() error { return s.t.Close() }

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

// wrappedWidth is the width a column of cells that row cuts takes: that
// of the longest cell, at most wrapWidth.
func wrappedWidth(longest int) int { return min(longest, wrapWidth) }
