package rankmap

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/mimoplan/mimoplan/internal/safetext"
)

// Sizes of the picture, in SVG user units (pixels).
const (
	cellW, cellH = 64, 46
	gap          = 6
	left, top    = 78, 70
	nodeCell     = 10 // an aggregated cell
	nodeCols     = 128
)

// outlinePalette colours the outlined groups: dark, so that they show on
// every module colour; neighbouring groups get different colours.
var outlinePalette = []string{"#1b1b1b", "#c2185b", "#1565c0", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037"}

// SVG writes the static picture.
func (m *Map) SVG(w io.Writer) error {
	b := bufio.NewWriterSize(w, 64<<10)
	if m.Aggregated {
		m.svgAggregated(b)
	} else {
		m.svgRanks(b)
	}
	return b.Flush()
}

func (m *Map) svgRanks(b *bufio.Writer) {
	width := left + m.Row*(cellW+gap) + 20
	height := top + m.Rows*(cellH+gap) + 24 + 18*(len(m.Modules)+2) + 8
	header(b, width, height, m.title())
	for c := range m.Row {
		fmt.Fprintf(b, `<text x="%d" y="%d" class="h">gpu %d</text>`+"\n", left+c*(cellW+gap)+cellW/2, top-8, c)
	}
	for n := range m.Rows {
		fmt.Fprintf(b, `<text x="%d" y="%d" class="l">%s %d</text>`+"\n", left-8, top+n*(cellH+gap)+cellH/2+4, m.RowName, n)
	}
	// Cells first, then the outlines over them.
	slots := make([][]Slot, m.World)
	for r := range m.World {
		slots[r] = m.Slots(r)
		m.svgCell(b, r, slots[r])
	}
	m.svgOutlines(b, slots)
	m.svgLegend(b, top+m.Rows*(cellH+gap)+24)
	b.WriteString("</svg>\n")
}

func header(b *bufio.Writer, width, height int, title string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	b.WriteString(`<style>.h{fill:#444;text-anchor:middle}.r{font-weight:bold;fill:#111;text-anchor:middle}.s{fill:#222;text-anchor:middle;font-size:9px}.t{font-size:14px;font-weight:bold}.l{fill:#444;text-anchor:end}</style>` + "\n")
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", width, height)
	fmt.Fprintf(b, `<text x="12" y="24" class="t">%s</text>`+"\n", esc(title))
}

func (m *Map) title() string {
	name := safetext.Text(m.Name) // no control character XML refuses
	if m.Name == "" {
		name = "layout"
	}
	rows := fmt.Sprintf("%d %ss", m.Rows, m.RowName)
	if m.Rows == 1 {
		rows = "1 " + m.RowName
	}
	return fmt.Sprintf("%s: %d ranks, %s, %s", name, m.World, m.t.Mode, rows)
}

// svgCell draws one rank: a band per module it serves, coloured by module
// and lightened by pipeline stage, the rank, the stages, and the marks.
func (m *Map) svgCell(b *bufio.Writer, r int, slots []Slot) {
	row, col := m.place(r)
	x, y := left+col*(cellW+gap), top+row*(cellH+gap)
	var names []string
	for _, s := range slots {
		names = append(names, m.Modules[s.Mod].Name)
	}
	fmt.Fprintf(b, `<g data-rank="%d" data-module="%s">`, r, esc(strings.Join(names, " ")))
	if len(slots) == 0 {
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#eee" stroke="#bbb"/>`, x, y, cellW, cellH)
	}
	for i, s := range slots {
		band := cellH / len(slots)
		mod := m.Modules[s.Mod]
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`, x, y+i*band, cellW, band, tint(mod.Color, s.Stage, mod.PP))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" class="r">%d</text>`, x+cellW/2, y+17, r)
	var stages []string
	for _, s := range slots {
		stages = append(stages, fmt.Sprintf("pp %d/%d", s.Stage, m.Modules[s.Mod].PP))
	}
	if len(stages) > 0 {
		fmt.Fprintf(b, `<text x="%d" y="%d" class="s">%s</text>`, x+cellW/2, y+33, esc(strings.Join(stages, " | ")))
	}
	for _, s := range slots {
		if s.Leader {
			fmt.Fprintf(b, `<path d="M%d %d h-11 l11 11 z" fill="#111"><title>bridge leader</title></path>`, x+cellW, y)
		}
		if s.Embd {
			fmt.Fprintf(b, `<circle cx="%d" cy="%d" r="4" fill="#fff" stroke="#111" stroke-width="1.5"><title>embedding rank</title></circle>`, x+cellW-7, y+cellH-7)
		}
	}
	b.WriteString("</g>\n")
}

// svgOutlines draws a box around each run of neighbouring ranks on one
// row that are in the same group of the outlined kind (a tp block is one
// box; a strided dp group a box per member), one colour per group.
func (m *Map) svgOutlines(b *bufio.Writer, slots [][]Slot) {
	for mi := range m.Modules {
		groupOf := func(r int) int {
			for _, s := range slots[r] {
				if s.Mod == mi {
					return s.Group
				}
			}
			return -1
		}
		for r := 0; r < m.World; {
			g := groupOf(r)
			if g < 0 {
				r++
				continue
			}
			end := r + 1
			for end < m.World && end%m.Row != 0 && groupOf(end) == g {
				end++
			}
			row, col := m.place(r)
			x, y := left+col*(cellW+gap)-3, top+row*(cellH+gap)-3
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="%s" stroke-width="2.5" rx="4"><title>%s group %d of %s</title></rect>`+"\n",
				x, y, (end-r)*(cellW+gap)-gap+6, cellH+6, outlinePalette[g%len(outlinePalette)], m.Kind, g, esc(m.Modules[mi].Name))
			r = end
		}
	}
}

func (m *Map) svgLegend(b *bufio.Writer, y int) {
	for i, mod := range m.Modules {
		fmt.Fprintf(b, `<rect x="12" y="%d" width="14" height="14" fill="%s"/><text x="32" y="%d">%s: ranks [%d, %d), %s</text>`+"\n",
			y+i*18, mod.Color, y+i*18+11, esc(mod.Name), mod.RankOffset, mod.RankOffset+mod.NumRanks, esc(sizes(mod)))
	}
	y += len(m.Modules) * 18
	fmt.Fprintf(b, `<text x="12" y="%d">lighter: a later pipeline stage (pp s/P on each rank); boxes: the %s groups, a colour a group</text>`+"\n", y+11, esc(m.Kind))
	fmt.Fprintf(b, `<path d="M23 %d h-11 l11 11 z" fill="#111"/><text x="32" y="%d">bridge leader</text>`, y+18, y+29)
	fmt.Fprintf(b, `<circle cx="150" cy="%d" r="4" fill="#fff" stroke="#111" stroke-width="1.5"/><text x="160" y="%d">embedding rank (embd group)</text>`+"\n", y+24, y+29)
}

// svgAggregated draws a cell per row: its modules' colours; a dark corner
// when it holds bridge leaders.
func (m *Map) svgAggregated(b *bufio.Writer) {
	cols := min(nodeCols, m.Rows)
	lines := (m.Rows + cols - 1) / cols
	width := left + cols*nodeCell + 20
	height := top + lines*nodeCell + 40 + 18*(len(m.Modules)+2)
	header(b, width, height, m.title()+" (a cell per "+m.RowName+")")
	fmt.Fprintf(b, `<text x="%d" y="%d">%d %ss a line</text>`+"\n", left, top-8, cols, m.RowName)
	for n := range m.Rows {
		s := m.Summary(n)
		x, y := left+(n%cols)*nodeCell, top+(n/cols)*nodeCell
		h := max((nodeCell-1)/max(len(s.Mods), 1), 1)
		for i, mi := range s.Mods {
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" data-node="%d"/>`, x, y+i*h, nodeCell-1, h, tint(m.Modules[mi].Color, s.Stages[i], m.Modules[mi].PP), n)
		}
		if s.Leaders > 0 {
			fmt.Fprintf(b, `<path d="M%d %d h-5 l5 5 z" fill="#111"/>`, x+nodeCell-1, y)
		}
		b.WriteByte('\n')
	}
	y := top + lines*nodeCell + 24
	for i, mod := range m.Modules {
		fmt.Fprintf(b, `<rect x="12" y="%d" width="14" height="14" fill="%s"/><text x="32" y="%d">%s: ranks [%d, %d), %s</text>`+"\n",
			y+i*18, mod.Color, y+i*18+11, esc(mod.Name), mod.RankOffset, mod.RankOffset+mod.NumRanks, esc(sizes(mod)))
	}
	fmt.Fprintf(b, `<text x="12" y="%[1]d">lighter: a later pipeline stage (of the %[2]s's first rank); dark corner: the %[2]s holds bridge leaders; the HTML page drills down</text>`+"\n", y+len(m.Modules)*18+11, m.RowName)
	b.WriteString("</svg>\n")
}

// tint lightens a colour by pipeline stage: stage 0 is the colour, the
// last stage of pp stages 55% of the way to white.
func tint(color string, stage, pp int) string {
	if pp <= 1 {
		return color
	}
	var r, g, bl int
	fmt.Sscanf(color, "#%02x%02x%02x", &r, &g, &bl)
	f := 0.55 * float64(stage) / float64(pp-1)
	mix := func(c int) int { return c + int(f*float64(255-c)) }
	return fmt.Sprintf("#%02x%02x%02x", mix(r), mix(g), mix(bl))
}

// sizes is a module's sizes that are not 1 (tp and dp always).
func sizes(m Module) string {
	parts := []string{fmt.Sprintf("tp=%d", m.TP)}
	for _, f := range []struct {
		k string
		v int
	}{{"gtp_remat", m.GTPRemat}, {"cp", m.CP}, {"pp", m.PP}, {"dp", m.DP}, {"ep", m.EP}, {"expt_tp", m.ExptTP}} {
		if f.v != 1 || f.k == "dp" {
			parts = append(parts, fmt.Sprintf("%s=%d", f.k, f.v))
		}
	}
	return strings.Join(parts, " ")
}

func esc(s string) string { return html.EscapeString(s) }
