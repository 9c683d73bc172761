package launch

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tabwriterTable is the node table as text/tabwriter lays it out, every
// row held until the end: the oracle of the streamed table.
func tabwriterTable(p *Plan, host func(Node) string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := "node rank"
	if p.Rendezvous.Backend == C10d {
		head = "join order"
	}
	fmt.Fprintf(tw, "# %s\thost\tranks\tmodules\n", head)
	for _, n := range p.Nodes() {
		var mods []string
		for _, m := range n.Modules {
			mods = append(mods, fmt.Sprintf("%s %s", m.Name, span(m.FirstRank, m.LastRank)))
		}
		fmt.Fprintf(tw, "# %d\t%s\t%s\t%s\n", n.NodeRank, comment(host(n)), span(n.FirstRank, n.LastRank), strings.Join(mods, ", "))
	}
	tw.Flush()
	b.WriteString("#\n")
	return b.String()
}

// The streamed node table is byte for byte tabwriter's, over random
// spans, node sizes and host names (of any width, some not ASCII, some
// with control characters that comment turns into spaces).
func TestTableAsTabwriter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	names := []string{"vision", "audio", "language", "a_very_long_module_name"}
	hostChars := []rune("abcxyz019-.é世\t\n")
	for range 300 {
		p := &Plan{NNodes: 1 + r.IntN(40), NProcPerNode: 1 + r.IntN(16)}
		if r.IntN(3) == 0 {
			p.Rendezvous.Backend = C10d
		}
		world := p.NNodes * p.NProcPerNode
		for off := 0; off < world; {
			n := 1 + r.IntN(world-off)
			p.spans = append(p.spans, ModuleSpan{Name: names[r.IntN(len(names))], FirstRank: off, LastRank: off + n - 1})
			off += n + r.IntN(3) // a gap now and then
		}
		for range p.NNodes {
			h := make([]rune, r.IntN(20))
			for k := range h {
				h[k] = hostChars[r.IntN(len(hostChars))]
			}
			p.hosts = append(p.hosts, string(h))
		}
		host := func(n Node) string { return n.Host }
		var got strings.Builder
		p.table(&got, host)
		require.Equal(t, tabwriterTable(p, host), got.String(), "%+v", p)
	}
}

// Check says no before a byte is written, for the same reasons as Write.
func TestCheck(t *testing.T) {
	p := build(t, threeModule, Options{Program: []string{"train.py"}})
	for format, want := range map[string]error{"sh": errNoHosts, "json": errNoHosts, "k8s": errNoImage, "slurm": nil} {
		assert.Equal(t, want, Check(format, p), format)
		var b strings.Builder
		err := Write(&b, format, p)
		assert.Equal(t, want, err, format)
		if want != nil {
			assert.Empty(t, b.String(), "%s: nothing written", format)
		}
	}
	assert.ErrorContains(t, Check("xml", p), `unknown plan format "xml"`)
	p = build(t, threeModule, Options{Hosts: hosts4, Program: []string{"train.py"}, Image: "img"})
	for _, format := range Formats {
		if format == "bridge" {
			assert.ErrorContains(t, Check(format, p), "is for target megatron-bridge")
			continue
		}
		assert.NoError(t, Check(format, p), format)
	}
}
