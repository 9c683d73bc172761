package plan

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/layout"
)

// specOnly are the keys a written layout drops from its spec: the
// constraints, and the placement and sizes that it sets again.
var (
	specOnlyTop    = []string{"colocated"}
	specOnlyModule = func() []string {
		keys := []string{"max_tp", "align", "vpp"}
		for _, f := range layout.SizeFields() {
			keys = append(keys, f.Name)
		}
		return keys
	}()
)

// WriteLayout writes candidate c as a layout: the spec's own text (its
// comments, cluster, batch, training and models as written) with the
// constraint keys removed and every module's placement and sizes set,
// under a comment block with the score's parts and memory headroom.
func WriteLayout(w io.Writer, spec []byte, c *Candidate) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		return fmt.Errorf("re-read spec: %w", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("re-read spec: not a mapping")
	}
	root := doc.Content[0]
	drop(root, specOnlyTop)
	mods := value(root, "modules")
	if mods == nil || mods.Kind != yaml.SequenceNode || len(mods.Content) != len(c.Modules) {
		return fmt.Errorf("re-read spec: modules changed")
	}
	for i, n := range mods.Content {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("re-read spec: module %d is not a mapping", i)
		}
		drop(n, specOnlyModule)
		n.Style = 0 // block style: one key a line
		ch := &c.Modules[i]
		set(n, "num_ranks", ch.NumRanks)
		set(n, "rank_offset", ch.RankOffset)
		set(n, "tp", ch.TP)
		if ch.GTPRemat != 1 {
			set(n, "gtp_remat", ch.GTPRemat)
		}
		set(n, "cp", ch.CP)
		set(n, "pp", ch.PP)
		if ch.VPP > 1 {
			set(n, "vpp", ch.VPP)
		}
		set(n, "ep", ch.EP)
		set(n, "expt_tp", ch.ExptTP)
		if ch.ExptGTPRemat != 1 {
			set(n, "expt_gtp_remat", ch.ExptGTPRemat)
		}
	}
	if c.Machine != nil {
		setMachine(root, c.Machine)
	}
	root.HeadComment = strings.TrimSpace(why(c) + "\n" + root.HeadComment)
	doc.HeadComment = ""
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// why is the comment block of a written layout.
func why(c *Candidate) string {
	s := &c.Score
	var b strings.Builder
	fmt.Fprintf(&b, "Written by mimoplan suggest. Estimated step: %.3f s per global batch of %d samples", s.StepSeconds, s.Samples)
	if s.Warnings > 0 {
		fmt.Fprintf(&b, ", %d warning(s) that mimoplan validate names", s.Warnings)
	}
	b.WriteString(" (docs/suggest.md).\n")
	for _, m := range s.Modules {
		fmt.Fprintf(&b, "%s: %.3f s = compute %.3f + bubble %.3f + tp %.3f + cp %.3f + ep %.3f + pp %.3f + dp %.3f",
			m.Name, m.Total, m.Compute, m.Bubble, m.TP, m.CP, m.EP, m.PP, m.DP)
		if m.Idle > 0 {
			fmt.Fprintf(&b, "; idle %.0f%%", 100*m.Idle)
		}
		if m.MemoryBytes > 0 {
			fmt.Fprintf(&b, "; memory %s", gib(m.MemoryBytes))
			if m.HeadroomBytes != 0 {
				fmt.Fprintf(&b, ", headroom %s", gib(m.HeadroomBytes))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// setMachine writes the machine a spec was planned on (suggest --probe)
// as the layout's cluster, in place of the spec's world_size and cluster.
func setMachine(root *yaml.Node, m *layout.Machine) {
	c := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, LineComment: "this node, probed: " + m.About}
	set(c, "nodes", m.Cluster.Nodes)
	set(c, "gpus_per_node", m.Cluster.GPUsPerNode)
	if m.GPUMemory > 0 {
		c.Content = append(c.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "gpu_memory"},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: m.GPUMemoryText()})
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "cluster"}
	// In the place of the first of world_size and cluster, else before
	// modules; the keys dropped all come after it.
	at := keyIndex(root, "world_size", "cluster")
	if at < 0 {
		at = max(0, keyIndex(root, "modules"))
	}
	drop(root, []string{"cluster", "world_size"})
	root.Content = slices.Insert(root.Content, min(at, len(root.Content)), key, c)
}

// keyIndex is the index in m.Content of the first of keys, or -1.
func keyIndex(m *yaml.Node, keys ...string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if slices.Contains(keys, m.Content[i].Value) {
			return i
		}
	}
	return -1
}

func value(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func drop(m *yaml.Node, keys []string) {
	var out []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !slices.Contains(keys, m.Content[i].Value) {
			out = append(out, m.Content[i], m.Content[i+1])
		}
	}
	m.Content = out
}

func set(m *yaml.Node, key string, v int) {
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(v)})
}
