package launch

import (
	"bufio"
	"encoding/json"
	"io"
)

type jsonPlan struct {
	Name         string     `json:"name"`
	Target       string     `json:"target"`
	WorldSize    int        `json:"world_size"`
	NNodes       int        `json:"nnodes"`
	NProcPerNode int        `json:"nproc_per_node"`
	Rendezvous   Rendezvous `json:"rendezvous"`
	Notes        []string   `json:"notes,omitempty"`
	// Topology is what MIMOPLAN_TOPOLOGY points at; a launcher that runs
	// this plan writes it on every node and sets the variable (the env of
	// each node holds the variable only for a --topology-out file).
	Topology json.RawMessage `json:"topology,omitempty"`
	Nodes    []jsonNode      `json:"nodes"`
}

type jsonNode struct {
	NodeRank  int               `json:"node_rank"`
	Host      string            `json:"host"`
	FirstRank int               `json:"first_rank"`
	LastRank  int               `json:"last_rank"`
	Modules   []ModuleSpan      `json:"modules"`
	Command   []string          `json:"command"`
	Env       map[string]string `json:"env"`
}

// WriteJSON writes the plan as one indented JSON document.
func WriteJSON(w io.Writer, p *Plan) error {
	if !p.concrete() {
		return errNoHosts
	}
	env := map[string]string{}
	for _, e := range p.Env {
		env[e.Name] = e.Value
	}
	jp := jsonPlan{
		Name: p.Name, Target: string(p.Target), WorldSize: p.WorldSize, NNodes: p.NNodes,
		NProcPerNode: p.NProcPerNode, Rendezvous: p.Rendezvous, Notes: p.Notes,
		Nodes: make([]jsonNode, len(p.Nodes)),
	}
	if p.PassTopology {
		jp.Topology = p.Topology
	}
	for i, n := range p.Nodes {
		jp.Nodes[i] = jsonNode{
			NodeRank: n.NodeRank, Host: n.Host, FirstRank: n.FirstRank, LastRank: n.LastRank,
			Modules: n.Modules, Command: n.Command, Env: env,
		}
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(jp); err != nil {
		return err
	}
	return bw.Flush()
}
