package layout

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Two commands write layout files: suggest --out (the spec's own text with
// every module's placement and sizes set) and import (a layout built from
// a launch). Both write through this file, so that the keys of a
// placement, their order and the YAML style are decided once.

// Encode writes doc, a YAML document node, as a layout file: two-space
// indent, block style where a node does not ask for flow.
func Encode(w io.Writer, doc *yaml.Node) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writtenSizes are a module's size keys in a written layout's order:
// SizeFields' sizes, with vpp after pp.
var writtenSizes = func() []SizeField {
	var out []SizeField
	for _, f := range SizeFields() {
		if !f.Parallel {
			continue
		}
		out = append(out, f)
		if f.Name == "pp" {
			out = append(out, SizeField{Name: "vpp", Parallel: true, Of: func(m *Module) int { return m.VPP }})
		}
	}
	return out
}()

// PutPlacement appends module m's placement to the mapping node n:
// num_ranks and rank_offset, then each size (tp, gtp_remat, cp, pp, vpp,
// dp, ep, expt_tp, expt_gtp_remat) for which write says so.
func PutPlacement(n *yaml.Node, m *Module, write func(key string, v int) bool) {
	PutInt(n, "num_ranks", m.NumRanks)
	PutInt(n, "rank_offset", m.RankOffset)
	for _, f := range writtenSizes {
		if v := f.Of(m); write(f.Name, v) {
			PutInt(n, f.Name, v)
		}
	}
}

// PutInt appends key: v to the mapping node n.
func PutInt(n *yaml.Node, key string, v int) {
	n.Content = append(n.Content, strNode(key), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(v)})
}

// PutStr appends key: v to the mapping node n, in the style given (0:
// plain where YAML reads it back as the same text).
func PutStr(n *yaml.Node, key, v string, style yaml.Style) {
	n.Content = append(n.Content, strNode(key), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Style: style})
}

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// specOnly are the keys a layout written from a spec drops: the
// constraints, and the placement and sizes that it sets again.
var (
	specOnlyTop    = []string{"colocated"}
	specOnlyModule = func() []string {
		keys := []string{"max_tp", "align", "vpp"}
		for _, f := range SizeFields() {
			keys = append(keys, f.Name)
		}
		return keys
	}()
)

// FillSpec writes a spec as a layout (suggest --out): the spec's own text
// (its comments, cluster, batch, training and models as written) with the
// constraint keys removed and each module's placement and sizes set from
// mods, under the comment head. tp, cp, pp, ep and expt_tp are always
// written, gtp_remat and expt_gtp_remat when not 1, vpp above 1, dp never
// (it follows). With on (suggest --probe), the node replaces the spec's
// world_size and cluster.
func FillSpec(w io.Writer, spec []byte, mods []Module, on *Machine, head string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		return fmt.Errorf("re-read spec: %w", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("re-read spec: not a mapping")
	}
	root := doc.Content[0]
	drop(root, specOnlyTop)
	ms := value(root, "modules")
	if ms == nil || ms.Kind != yaml.SequenceNode || len(ms.Content) != len(mods) {
		return fmt.Errorf("re-read spec: modules changed")
	}
	for i, n := range ms.Content {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("re-read spec: module %d is not a mapping", i)
		}
		drop(n, specOnlyModule)
		n.Style = 0 // block style: one key a line
		PutPlacement(n, &mods[i], func(key string, v int) bool {
			switch key {
			case "gtp_remat", "expt_gtp_remat":
				return v != 1
			case "vpp":
				return v > 1
			case "dp":
				return false
			}
			return true
		})
	}
	if on != nil {
		setMachine(root, on)
	}
	root.HeadComment = joinComments(head, root.HeadComment)
	doc.HeadComment = ""
	return Encode(w, &doc)
}

func joinComments(a, b string) string { return strings.TrimSpace(a + "\n" + b) }

// setMachine writes the machine a spec was planned on (suggest --probe)
// as the layout's cluster, in place of the spec's world_size and cluster.
func setMachine(root *yaml.Node, m *Machine) {
	c := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, LineComment: "this node, probed: " + m.About}
	PutInt(c, "nodes", m.Cluster.Nodes)
	PutInt(c, "gpus_per_node", m.Cluster.GPUsPerNode)
	if m.GPUMemory > 0 {
		PutStr(c, "gpu_memory", m.GPUMemoryText(), 0)
	}
	// In the place of the first of world_size and cluster, else before
	// modules; the keys dropped all come after it.
	at := keyIndex(root, "world_size", "cluster")
	if at < 0 {
		at = max(0, keyIndex(root, "modules"))
	}
	drop(root, []string{"cluster", "world_size"})
	root.Content = slices.Insert(root.Content, min(at, len(root.Content)), strNode("cluster"), c)
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
