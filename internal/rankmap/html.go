package rankmap

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
)

//go:embed assets/page.css
var pageCSS string

//go:embed assets/page.js
var pageJS string

// pageData is what the page's script reads: each module's grid, from
// which it enumerates groups itself, and the group kinds.
type pageData struct {
	Name       string       `json:"name"`
	World      int          `json:"world"`
	Row        int          `json:"row"`
	RowName    string       `json:"rowName"`
	Aggregated bool         `json:"aggregated"`
	Kind       string       `json:"kind"`
	Modules    []pageModule `json:"modules"`
	Kinds      []pageKind   `json:"kinds"`
}

type pageModule struct {
	Name   string   `json:"name"`
	Color  string   `json:"color"`
	Offset int      `json:"offset"`
	N      int      `json:"n"`
	PP     int      `json:"pp"`
	Role   string   `json:"role"`
	Base   [][2]any `json:"base"`   // [dim, size], first dim fastest
	Expert [][2]any `json:"expert"` // the expert view, sharing pp
}

type pageKind struct {
	Name     string   `json:"name"`
	Dims     []string `json:"dims"`
	View     string   `json:"view"`
	Language bool     `json:"language"`
}

// HTML writes the page: one self-contained file (styles, script and data
// inline; nothing fetched), a cell per rank (data-rank, data-module) or,
// above AggregateAbove ranks, a cell per node (data-node) that drills down
// to its ranks.
func (m *Map) HTML(w io.Writer, p Page) error {
	b := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s — mimoplan rank map</title>\n<style>%s</style></head>\n<body>\n", esc(m.title()), pageCSS)
	fmt.Fprintf(b, "<header><h1>%s</h1><label>outline <select id=\"kind\">", esc(m.title()))
	for _, k := range grid.GroupKinds {
		sel := ""
		if k.Name == m.Kind {
			sel = " selected"
		}
		fmt.Fprintf(b, "<option%s>%s</option>", sel, k.Name)
	}
	b.WriteString("<option value=\"\">none</option></select> groups</label>")
	b.WriteString("<span class=\"legend\"><span>lighter: a later pipeline stage</span><span>&#9698; bridge leader</span><span>&#9675; embedding rank</span></span></header>\n<main>\n<div>")
	if m.Aggregated {
		m.htmlNodes(b)
	} else {
		m.htmlRanks(b)
	}
	b.WriteString("</div>\n<aside>\n")
	if m.Aggregated {
		fmt.Fprintf(b, "<div id=\"info\">A cell per %s: click one to see its ranks, then a rank for its groups.</div>\n", m.RowName)
	} else {
		b.WriteString("<div id=\"info\">Hover or click a rank for its coordinates and groups.</div>\n")
	}
	m.htmlSide(b, p)
	b.WriteString("</aside>\n</main>\n<script type=\"application/json\" id=\"data\">")
	data, err := json.Marshal(m.data()) // escapes <, > and &: safe inside a script element
	if err != nil {
		return err
	}
	b.Write(data)
	fmt.Fprintf(b, "</script>\n<script>%s</script>\n</body></html>\n", pageJS)
	return b.Flush()
}

func (m *Map) htmlRanks(b *bufio.Writer) {
	b.WriteString("<section id=\"map\">")
	for n := range m.Rows {
		fmt.Fprintf(b, "<div class=\"row\"><span class=\"lbl\">%s %d</span>", m.RowName, n)
		for r := n * m.Row; r < min((n+1)*m.Row, m.World); r++ {
			m.htmlCell(b, r)
		}
		b.WriteString("</div>\n")
	}
	b.WriteString("</section>\n")
}

// htmlCell is one rank: the same cell the script draws when it drills down.
func (m *Map) htmlCell(b *bufio.Writer, r int) {
	slots := m.Slots(r)
	var names, bands, stages []string
	class := "cell"
	lead, embd := false, false
	for i, s := range slots {
		mod := m.Modules[s.Mod]
		names = append(names, mod.Name)
		c := tint(mod.Color, s.Stage, mod.PP)
		bands = append(bands, fmt.Sprintf("%s %g%% %g%%", c, 100*float64(i)/float64(len(slots)), 100*float64(i+1)/float64(len(slots))))
		stages = append(stages, fmt.Sprintf("pp %d/%d", s.Stage, mod.PP))
		lead = lead || s.Leader
		embd = embd || s.Embd
	}
	if lead {
		class += " lead"
	}
	if embd {
		class += " embd"
	}
	bg := "#eee"
	if len(bands) > 0 {
		bg = "linear-gradient(" + strings.Join(bands, ",") + ")"
	}
	fmt.Fprintf(b, "<div class=\"%s\" data-rank=\"%d\" data-module=\"%s\" style=\"background:%s\"><b>%d</b><i>%s</i></div>",
		class, r, esc(strings.Join(names, " ")), bg, r, strings.Join(stages, " | "))
}

// htmlNodes draws a cell per row, coloured by its modules and first
// ranks' stages.
func (m *Map) htmlNodes(b *bufio.Writer) {
	cols := min(nodeCols, m.Rows)
	fmt.Fprintf(b, "<p>%d %ss, a cell each, %d a line</p><section id=\"map\" class=\"grid\" style=\"grid-template-columns:repeat(%d,9px)\">", m.Rows, m.RowName, cols, cols)
	for n := range m.Rows {
		s := m.Summary(n)
		var names, bands []string
		for i, mi := range s.Mods {
			mod := m.Modules[mi]
			names = append(names, mod.Name)
			bands = append(bands, fmt.Sprintf("%s %d%% %d%%", tint(mod.Color, s.Stages[i], mod.PP), 100*i/len(s.Mods), 100*(i+1)/len(s.Mods)))
		}
		class := "node"
		if s.Leaders > 0 {
			class += " lead"
		}
		bg := "#eee"
		if len(bands) == 1 {
			bg = strings.Fields(bands[0])[0]
		} else if len(bands) > 1 {
			bg = "linear-gradient(" + strings.Join(bands, ",") + ")"
		}
		fmt.Fprintf(b, "<div class=\"%s\" data-node=\"%d\" data-modules=\"%s\" style=\"background:%s\" title=\"%s %d\"></div>", class, n, esc(strings.Join(names, " ")), bg, m.RowName, n)
	}
	b.WriteString("</section>\n<section id=\"drill\"></section>\n")
}

// htmlSide is the side panel: the module table, the batch arithmetic and
// validate's diagnostics, each pinned to its module's ranks.
func (m *Map) htmlSide(b *bufio.Writer, p Page) {
	b.WriteString("<h2>Modules</h2><table><tr><th>module</th><th>ranks</th><th>tp</th><th>cp</th><th>pp</th><th>dp</th><th>ep</th><th>expt_tp</th><th>expt_dp</th><th>bridge</th></tr>")
	for _, mod := range m.Modules {
		fmt.Fprintf(b, "<tr><td><span class=\"sw\" style=\"background:%s\"></span>%s</td><td>[%d, %d)</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td></tr>",
			mod.Color, esc(mod.Name), mod.RankOffset, mod.RankOffset+mod.NumRanks, mod.TP, mod.CP, mod.PP, mod.DP, mod.EP, mod.ExptTP, mod.ExptDP, role(mod.Role))
	}
	b.WriteString("</table>\n<h2>Batch</h2><ul id=\"notes\">")
	if len(p.Notes) == 0 {
		b.WriteString("<li>no batch in the layout</li>")
	}
	for _, n := range p.Notes {
		fmt.Fprintf(b, "<li>%s</li>", esc(n))
	}
	b.WriteString("</ul>\n<h2>Warnings</h2><ul id=\"warnings\">")
	shown := 0
	for _, d := range p.Diags {
		if d.Severity == diag.Note {
			continue
		}
		shown++
		where := "the layout"
		if mod := m.module(d.Module); mod != nil {
			where = fmt.Sprintf("%s, ranks [%d, %d)", mod.Name, mod.RankOffset, mod.RankOffset+mod.NumRanks)
		}
		named := ""
		if rs := m.namedRanks(d.Message); len(rs) > 0 {
			named = fmt.Sprintf(" data-ranks=\"%s\"", strings.Trim(fmt.Sprint(rs), "[]"))
			where += fmt.Sprintf("; names ranks %v", rs)
		}
		fmt.Fprintf(b, "<li class=\"%s\" data-module=\"%s\"%s title=\"click: mark its ranks\"><b>%s</b> [%s] %s <small>(line %d; %s)</small></li>",
			d.Severity, esc(d.Module), named, d.Severity, esc(d.Rule), esc(d.Message), d.Line, esc(where))
	}
	if shown == 0 {
		b.WriteString("<li>none</li>")
	}
	b.WriteString("</ul>\n")
}

// rankList is a bracketed list of ranks in a diagnostic's message, as the
// rules write an example group: "first: [16384 16392]".
var rankList = regexp.MustCompile(`\[(\d+(?: \d+)*)\]`)

// namedRanks is the ranks a diagnostic names, when it names a group of
// them inside the world: a warning is pinned to those ranks rather than to
// its whole module.
func (m *Map) namedRanks(msg string) []int {
	match := rankList.FindStringSubmatch(msg)
	if match == nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(match[1]) {
		r, err := strconv.Atoi(f)
		if err != nil || r >= m.World {
			return nil
		}
		out = append(out, r)
	}
	return out
}

func (m *Map) module(name string) *Module {
	for i := range m.Modules {
		if m.Modules[i].Name == name {
			return &m.Modules[i]
		}
	}
	return nil
}

func role(r string) string {
	switch r {
	case "src":
		return "src"
	case "dest":
		return "dest"
	}
	return "-"
}

func (m *Map) data() pageData {
	d := pageData{Name: m.Name, World: m.World, Row: m.Row, RowName: m.RowName, Aggregated: m.Aggregated, Kind: m.Kind}
	for _, mod := range m.Modules {
		pm := pageModule{Name: mod.Name, Color: mod.Color, Offset: mod.RankOffset, N: mod.NumRanks, PP: mod.PP, Role: mod.Role}
		for i, n := range grid.BaseDims {
			pm.Base = append(pm.Base, [2]any{n, []int{mod.TP, mod.GTPRemat, mod.CP, mod.DP, mod.PP}[i]})
		}
		for i, n := range grid.ExpertDims {
			pm.Expert = append(pm.Expert, [2]any{n, []int{mod.ExptTP, mod.EP, mod.ExptGTPRemat, mod.ExptDP, mod.PP}[i]})
		}
		d.Modules = append(d.Modules, pm)
	}
	for _, k := range grid.GroupKinds {
		view := k.View
		if view == "" {
			view = "base"
		}
		d.Kinds = append(d.Kinds, pageKind{Name: k.Name, Dims: k.Dims, View: view, Language: k.LanguageOnly})
	}
	return d
}
