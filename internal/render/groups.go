package render

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/safetext"
	"github.com/mimoplan/mimoplan/internal/topo"
)

func renderGroups(w *bufio.Writer, t *topo.Topology, sel selection, o Options) error {
	out := newOut(w)
	switch o.Format {
	case "json":
		groupsJSON(out, t, sel)
	case "yaml":
		groupsYAML(out, t, sel)
	case "csv":
		groupsCSV(out, sel)
	default:
		return groupsTable(w, t, sel, o)
	}
	return out.close()
}

func groupsJSON(o *out, t *topo.Topology, sel selection) {
	o.s(`{"version":1,"name":`)
	o.quoted(t.Name)
	o.s(`,"world_size":`)
	o.int(t.WorldSize)
	o.s(`,"mode":"`)
	o.s(string(t.Mode))
	o.s(`","modules":[`)
	for i, m := range sel.modules {
		if i > 0 {
			o.s(",")
		}
		o.s(`{"name":`)
		o.quoted(m.Name)
		for _, f := range moduleSizes(m) {
			o.s(`,"`)
			o.s(f.key)
			o.s(`":`)
			o.int(f.val)
		}
		o.s(`,"groups":{`)
		for j, g := range sel.groups(m) {
			if j > 0 {
				o.s(",")
			}
			o.s(`"`)
			o.s(g.Kind)
			o.s(`":`)
			o.enum(g.Enum, false)
		}
		o.s("}}")
	}
	o.s("]}\n")
}

func groupsYAML(o *out, t *topo.Topology, sel selection) {
	o.s("version: 1\nname: ")
	o.quoted(t.Name)
	o.s("\nworld_size: ")
	o.int(t.WorldSize)
	o.s("\nmode: ")
	o.s(string(t.Mode))
	o.s("\nmodules:\n")
	for _, m := range sel.modules {
		o.s("  - name: ")
		o.quoted(m.Name)
		o.s("\n")
		for _, f := range moduleSizes(m) {
			o.s("    ")
			o.s(f.key)
			o.s(": ")
			o.int(f.val)
			o.s("\n")
		}
		gs := sel.groups(m)
		if len(gs) == 0 {
			o.s("    groups: {}\n")
			continue
		}
		o.s("    groups:\n")
		for _, g := range gs {
			o.s("      ")
			o.s(g.Kind)
			o.s(": ")
			o.enum(g.Enum, true)
			o.s("\n")
		}
	}
}

func groupsCSV(o *out, sel selection) {
	o.s("module,group,index,size,ranks\n")
	for _, m := range sel.modules {
		for _, g := range sel.groups(m) {
			// Each row starts with "module,kind," and ends with a newline.
			prefix := m.Name + "," + g.Kind + ","
			size := g.Enum.GroupSize()
			for i := range g.Enum.NumGroups() {
				o.buf = append(o.buf, prefix...)
				o.buf = strconv.AppendInt(o.buf, int64(i), 10)
				o.buf = append(o.buf, ',')
				o.buf = strconv.AppendInt(o.buf, int64(size), 10)
				o.buf = append(o.buf, ',')
				o.members(g.Enum, i, ' ', false)
				o.buf = append(o.buf, '\n')
			}
		}
	}
}

// title is the layout's name for a table heading, shown by safetext's
// rule (quoted when it holds a character a terminal or a CI log would act
// on), its punctuation escaped in Markdown.
func title(t *topo.Topology, format string) string {
	switch {
	case t.Name == "":
		return "layout"
	case format == "markdown":
		return safetext.Markdown(t.Name)
	}
	return safetext.Text(t.Name)
}

// sizes summarises a module's parallel sizes, leaving out those at 1 and,
// for a module without experts, the expert view.
func sizes(t *topo.Topology, m *grid.Module) string {
	var parts []string
	experts := hasExperts(t, m)
	for _, f := range moduleSizes(m)[2:] {
		if !experts && (f.key == "ep" || strings.HasPrefix(f.key, "expt_")) {
			continue
		}
		if f.val != 1 || f.key == "dp" || f.key == "tp" {
			parts = append(parts, fmt.Sprintf("%s=%d", f.key, f.val))
		}
	}
	return strings.Join(parts, " ")
}
