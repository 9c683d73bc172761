package render

import (
	"bufio"

	"github.com/mimoplan/mimoplan/internal/topo"
)

// streamRank writes --rank's json (yaml when yaml) as rankDoc would, but
// appending each group's members from its enumeration's runs, for the
// ranks whose groups are too long to build whole.
func streamRank(w *bufio.Writer, t *topo.Topology, r int, entries []rankEntry, yaml bool) error {
	node, gpu, placed := place(t, r)
	o2 := newOut(w)
	key := func(k string, first bool) {
		switch {
		case yaml:
			o2.s(k + ": ")
		case first:
			o2.s(`"` + k + `":`)
		default:
			o2.s(`,"` + k + `":`)
		}
	}
	opt := func(v int, ok bool) {
		if ok {
			o2.int(v)
		} else {
			o2.s("null")
		}
	}
	if !yaml {
		o2.s("{")
	}
	key("rank", true)
	o2.int(r)
	nl(o2, yaml)
	key("node", false)
	opt(node, placed)
	nl(o2, yaml)
	key("local_gpu", false)
	opt(gpu, placed)
	nl(o2, yaml)
	key("modules", false)
	if yaml {
		if len(entries) == 0 {
			o2.s("[]")
		}
		o2.s("\n")
	} else {
		o2.s("[")
	}
	for i, en := range entries {
		if yaml {
			o2.s("  - name: ")
			o2.quoted(en.m.Name)
			o2.s("\n    coords: {")
		} else {
			if i > 0 {
				o2.s(",")
			}
			o2.s(`{"name":`)
			o2.quoted(en.m.Name)
			o2.s(`,"coords":{`)
		}
		for j, n := range en.c.names {
			if j > 0 {
				o2.s(", ")
			}
			if yaml {
				o2.s(n + ": ")
			} else {
				o2.s(`"` + n + `":`)
			}
			o2.int(en.c.values[j])
		}
		if yaml {
			o2.f("}\n    first_pp_stage: %t\n    last_pp_stage: %t\n    groups:", en.c.pp == 0, en.c.pp == en.c.ps-1)
			if len(en.groups) == 0 {
				o2.s(" {}")
			}
			o2.s("\n")
		} else {
			o2.f(`},"first_pp_stage":%t,"last_pp_stage":%t,"groups":{`, en.c.pp == 0, en.c.pp == en.c.ps-1)
		}
		for j, g := range en.groups {
			if yaml {
				o2.s("      " + g.Kind + ": ")
			} else {
				if j > 0 {
					o2.s(",")
				}
				o2.s(`"` + g.Kind + `":`)
			}
			o2.group(g.Enum, en.index[g.Kind], ',', true)
			if yaml {
				o2.s("\n")
			}
		}
		if !yaml {
			o2.s("}}")
		}
	}
	if !yaml {
		o2.s("]}\n")
	}
	return o2.close()
}

func nl(o *out, yaml bool) {
	if yaml {
		o.s("\n")
	}
}
