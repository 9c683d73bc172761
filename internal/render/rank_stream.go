package render

import (
	"bufio"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/topo"
)

// streamRank writes --rank's json (yaml when yaml): the rank's place,
// then module by module its coordinates, pipeline ends and the groups
// that hold it. Each group's members come from its enumeration's runs, so
// that a group of a million ranks costs no memory. The bytes are those
// encoding/json (one line) and yaml.v3 (indent 2, coordinates and groups
// in flow style) write for the same document: rank_test.go holds the
// two side by side.
func streamRank(w *bufio.Writer, t *topo.Topology, r int, entries []rankEntry, yaml bool) error {
	node, gpu, placed := place(t, r)
	o := newOut(w)
	// field writes a key of the top level or of a module: JSON's
	// separated by commas after the first, YAML's one a line, indented.
	field := func(indent, key string, first bool) {
		switch {
		case yaml:
			o.s(indent + key + ": ")
		case first:
			o.s(`"` + key + `":`)
		default:
			o.s(`,"` + key + `":`)
		}
	}
	eol := func() {
		if yaml {
			o.s("\n")
		}
	}
	opt := func(v int) {
		if placed {
			o.int(v)
		} else {
			o.s("null")
		}
	}
	if !yaml {
		o.s("{")
	}
	field("", "rank", true)
	o.int(r)
	eol()
	field("", "node", false)
	opt(node)
	eol()
	field("", "local_gpu", false)
	opt(gpu)
	eol()
	switch {
	case !yaml:
		o.s(`,"modules":[`)
	case len(entries) == 0:
		o.s("modules: []\n")
	default:
		o.s("modules:\n")
	}
	for i, en := range entries {
		if yaml {
			o.s("  - name: " + yamlScalar(en.m.Name) + "\n    coords: {")
		} else {
			if i > 0 {
				o.s(",")
			}
			o.s(`{"name":`)
			o.quoted(en.m.Name)
			o.s(`,"coords":{`)
		}
		for j, n := range en.c.names {
			switch {
			case yaml && j > 0:
				o.s(", " + n + ": ")
			case yaml:
				o.s(n + ": ")
			default:
				field("", n, j == 0)
			}
			o.int(en.c.values[j])
		}
		o.s("}")
		eol()
		field("    ", "first_pp_stage", false)
		o.f("%t", en.c.pp == 0)
		eol()
		field("    ", "last_pp_stage", false)
		o.f("%t", en.c.pp == en.c.ps-1)
		eol()
		switch {
		case !yaml:
			o.s(`,"groups":{`)
		case len(en.groups) == 0:
			o.s("    groups: {}\n")
		default:
			o.s("    groups:\n")
		}
		for j, g := range en.groups {
			field("      ", g.Kind, j == 0)
			o.group(g.Enum, en.index[g.Kind], ',', yaml)
			eol()
		}
		if !yaml {
			o.s("}}")
		}
	}
	if !yaml {
		o.s("]}\n")
	}
	return o.close()
}

// yamlScalar is s as yaml.v3 writes a string: plain, or quoted when it
// would read back as another type (a module may be named null or true).
func yamlScalar(s string) string {
	b, _ := yaml.Marshal(s) // a string always marshals
	return strings.TrimSuffix(string(b), "\n")
}
