package launch

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mimoplan/mimoplan/internal/layout"
)

// The writers stream the nodes: each is made (Plan.Node) when it is
// written and dropped after, so that a plan of 131,072 nodes takes the
// memory of one node and its host list, and time linear in the nodes.
// WriteJSON (json.go) encodes node by node.

// Check returns the error Write would give p in format before writing a
// byte: an unknown format, a plan without hosts for sh or json, one
// without an image for k8s or pytorchjob, a bad --sbatch directive for
// slurm. Write checks first, so that a caller that has
// checked can stream the plan into its file: an error Write still returns
// is the writer's. A new format is added here as well as to Write.
func Check(format string, p *Plan) error {
	switch format {
	case "sh", "json":
		if !p.concrete() {
			return errNoHosts
		}
	case "k8s", "pytorchjob":
		if p.Image == "" {
			return errNoImage
		}
	case "slurm":
		return CheckSbatch(p.Slurm.Sbatch)
	case "megatron-specs":
	case "bridge":
		if p.Target != layout.TargetMegatronBridge || p.topo == nil {
			return fmt.Errorf("--format bridge is for target megatron-bridge (the layout's target is %s, whose rules it was checked against)", p.Target)
		}
	default:
		return fmt.Errorf("unknown plan format %q: want one of %s", format, strings.Join(Formats, ", "))
	}
	return nil
}

// concrete reports whether every node has a host and a command.
func (p *Plan) concrete() bool {
	if p.Rendezvous.MasterAddr == "" || len(p.hosts) < p.NNodes {
		return false
	}
	for _, h := range p.hosts[:p.NNodes] {
		if h == "" {
			return false
		}
	}
	return true
}

const spaces = "                                "

// table writes which ranks and modules live on each node, as a comment
// laid out as text/tabwriter would (each column two spaces wider than its
// widest cell, the last not padded). The widths come from a first pass
// over the nodes, so that no row is kept.
func (p *Plan) table(w io.Writer, host func(Node) string) {
	head := "node rank"
	if p.Rendezvous.Backend == C10d {
		head = "join order"
	}
	var cells [4]string
	row := func(n Node) {
		cells[0] = "# " + strconv.Itoa(n.NodeRank)
		cells[1] = comment(host(n))
		cells[2] = span(n.FirstRank, n.LastRank)
		var b strings.Builder
		for i, m := range n.Modules {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(m.Name)
			b.WriteByte(' ')
			b.WriteString(span(m.FirstRank, m.LastRank))
		}
		cells[3] = b.String()
	}
	header := [4]string{"# " + head, "host", "ranks", "modules"}
	var widths [3]int
	for j := range widths {
		widths[j] = utf8.RuneCountInString(header[j])
	}
	for i := range p.NNodes {
		row(p.place(i))
		for j := range widths {
			widths[j] = max(widths[j], utf8.RuneCountInString(cells[j]))
		}
	}
	line := func(cells [4]string) {
		for j, c := range cells[:3] {
			io.WriteString(w, c)
			for pad := widths[j] + 2 - utf8.RuneCountInString(c); pad > 0; pad -= len(spaces) {
				io.WriteString(w, spaces[:min(pad, len(spaces))])
			}
		}
		io.WriteString(w, cells[3])
		io.WriteString(w, "\n")
	}
	line(header)
	for i := range p.NNodes {
		row(p.place(i))
		line(cells)
	}
	fmt.Fprintln(w, "#")
}

// eachHost writes the host of every node, as f gives it, with sep between.
func (p *Plan) eachHost(w io.Writer, sep string, f func(string) string) {
	for i := range p.NNodes {
		if i > 0 {
			io.WriteString(w, sep)
		}
		io.WriteString(w, f(p.host(i)))
	}
}
