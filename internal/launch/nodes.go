package launch

// The nodes of a plan, each made when it is written, and their torchrun
// command lines.

import (
	"iter"
	"strconv"
	"strings"
)

// Node returns node rank i (0 <= i < NNodes). torchrun gives node rank i
// the global ranks [i*nproc, (i+1)*nproc), local rank j being global rank
// i*nproc+j.
func (p *Plan) Node(i int) Node {
	n := p.place(i)
	if p.Rendezvous.MasterAddr != "" {
		n.Command = plainArgv(p.words(lit(strconv.Itoa(i)), lit(p.Rendezvous.MasterAddr)))
	}
	return n
}

// place is node rank i without its command.
func (p *Plan) place(i int) Node {
	n := Node{NodeRank: i, FirstRank: i * p.NProcPerNode, LastRank: (i+1)*p.NProcPerNode - 1, Host: p.host(i)}
	for _, m := range p.spans {
		lo, hi := max(n.FirstRank, m.FirstRank), min(n.LastRank, m.LastRank)
		if lo <= hi {
			n.Modules = append(n.Modules, ModuleSpan{Name: m.Name, FirstRank: lo, LastRank: hi})
		}
	}
	return n
}

// host is node rank i's host, or "" when the plan has none.
func (p *Plan) host(i int) string {
	if i < len(p.hosts) {
		return p.hosts[i]
	}
	return ""
}

// Nodes yields every node in node-rank order, each made when it is reached.
func (p *Plan) Nodes() iter.Seq2[int, Node] {
	return func(yield func(int, Node) bool) {
		for i := range p.NNodes {
			if !yield(i, p.Node(i)) {
				return
			}
		}
	}
}

// words is the argv of one node's torchrun, with the node rank and master
// address given as words, so that a scheduler's variables can stand in for
// them.
func (p *Plan) words(nodeRank, master word) []word {
	ws := p.launcher(nodeRank, master)
	for _, a := range p.Program {
		ws = append(ws, lit(a))
	}
	return ws
}

// launcher is the entrypoint and its flags, without the program.
func (p *Plan) launcher(nodeRank, master word) []word {
	var ws []word
	for _, e := range p.Entrypoint {
		ws = append(ws, lit(e))
	}
	ws = append(ws,
		lit("--nnodes="+strconv.Itoa(p.NNodes)),
		lit("--nproc-per-node="+strconv.Itoa(p.NProcPerNode)))
	port := strconv.Itoa(p.Rendezvous.MasterPort)
	if p.Rendezvous.Backend == C10d {
		host := master
		if len(master) == 1 && !master[0].ref && strings.Contains(master[0].s, ":") && !strings.HasPrefix(master[0].s, "[") {
			host = lit("[" + master[0].s + "]") // an IPv6 endpoint needs brackets before :port
		}
		return append(ws,
			lit("--rdzv-backend=c10d"),
			append(append(lit("--rdzv-endpoint="), host...), part{s: ":" + port}),
			lit("--rdzv-id="+p.Rendezvous.ID))
	}
	return append(ws,
		append(lit("--node-rank="), nodeRank...),
		append(lit("--master-addr="), master...),
		lit("--master-port="+port))
}

func plainArgv(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.plain()
	}
	return out
}
