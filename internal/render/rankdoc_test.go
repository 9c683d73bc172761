package render

import (
	"encoding/json"
	"io"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/topo"
)

// rankDoc is what --rank prints as json or yaml: one rank's coordinates
// and groups, module by module, as Go values that encoding/json and
// yaml.v3 write: the oracle of streamRank, which writes the same bytes
// without holding any group (TestRankStreamIsEncoders).
type rankDoc struct {
	Rank     int          `json:"rank" yaml:"rank"`
	Node     *int         `json:"node" yaml:"node"` // nil without a cluster
	LocalGPU *int         `json:"local_gpu" yaml:"local_gpu"`
	Modules  []rankModule `json:"modules" yaml:"modules"`
}

type rankModule struct {
	Name   string   `json:"name" yaml:"name"`
	Coords coordMap `json:"coords" yaml:"coords"`
	First  bool     `json:"first_pp_stage" yaml:"first_pp_stage"`
	Last   bool     `json:"last_pp_stage" yaml:"last_pp_stage"`
	Groups groupMap `json:"groups" yaml:"groups"`
}

func newRankDoc(t *topo.Topology, r int, entries []rankEntry) *rankDoc {
	d := &rankDoc{Rank: r, Modules: []rankModule{}}
	if node, gpu, placed := place(t, r); placed {
		d.Node, d.LocalGPU = &node, &gpu
	}
	for _, en := range entries {
		rm := rankModule{
			Name:   en.m.Name,
			Coords: coordMap{keys: en.c.names, values: en.c.values},
			First:  en.c.pp == 0,
			Last:   en.c.pp == en.c.ps-1,
		}
		for _, g := range en.groups {
			rm.Groups.keys = append(rm.Groups.keys, g.Kind)
			rm.Groups.values = append(rm.Groups.values, g.Enum.AppendGroup(nil, en.index[g.Kind]))
		}
		d.Modules = append(d.Modules, rm)
	}
	return d
}

// write prints d in format, json (one line) or yaml.
func (d *rankDoc) write(w io.Writer, format string) error {
	if format == "json" {
		return json.NewEncoder(w).Encode(d)
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(d); err != nil {
		return err
	}
	return enc.Close()
}

// ordered is a mapping that keeps its keys in the order given (the
// grid's dims, the group kinds' order), where encoding/json and yaml.v3
// would sort a Go map's keys.
type ordered[V any] struct {
	keys   []string
	values []V
}

func (m ordered[V]) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, k := range m.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(m.values[i])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}'), nil
}

// node is m as a yaml mapping of values in flow style ([4, 5]), built
// node by node: Node.Encode would print and re-parse every value.
func (m ordered[V]) node(value func(V) *yaml.Node) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i, k := range m.keys {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, value(m.values[i]))
	}
	return n
}

func intNode(v int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(v)}
}

func listNode(vs []int) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Content: make([]*yaml.Node, len(vs))}
	for i, v := range vs {
		n.Content[i] = intNode(v)
	}
	return n
}

// coordMap is a module's coordinates, dim by dim, on one line in yaml.
type coordMap ordered[int]

func (m coordMap) MarshalJSON() ([]byte, error) { return ordered[int](m).MarshalJSON() }

func (m coordMap) MarshalYAML() (any, error) {
	n := ordered[int](m).node(intNode)
	n.Style = yaml.FlowStyle
	return n, nil
}

// groupMap is a module's groups that hold the rank, kind by kind, each
// group's ranks on one line in yaml.
type groupMap ordered[[]int]

func (m groupMap) MarshalJSON() ([]byte, error) { return ordered[[]int](m).MarshalJSON() }

func (m groupMap) MarshalYAML() (any, error) { return ordered[[]int](m).node(listNode), nil }
