package launch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

type jsonHead struct {
	Name         string     `json:"name"`
	Target       string     `json:"target"`
	WorldSize    int        `json:"world_size"`
	NNodes       int        `json:"nnodes"`
	NProcPerNode int        `json:"nproc_per_node"`
	Rendezvous   Rendezvous `json:"rendezvous"`
	Notes        []string   `json:"notes,omitempty"`
	// Env is every node's environment, given once.
	Env map[string]string `json:"env"`
	// Topology is what MIMOPLAN_TOPOLOGY points at; a launcher that runs
	// this plan writes it on every node and sets the variable (env holds
	// the variable only for a --topology-out file).
	Topology json.RawMessage `json:"topology,omitempty"`
}

type jsonNode struct {
	NodeRank  int          `json:"node_rank"`
	Host      string       `json:"host"`
	FirstRank int          `json:"first_rank"`
	LastRank  int          `json:"last_rank"`
	Modules   []ModuleSpan `json:"modules"`
	Command   []string     `json:"command"`
}

// WriteJSON writes the plan as one indented JSON document: the plan's
// fields, the environment of every node once ("env"), then "nodes", each
// made and encoded as it is reached, so that a plan of 131,072 nodes takes
// the memory of one.
func WriteJSON(w io.Writer, p *Plan) error {
	if !p.concrete() {
		return errNoHosts
	}
	head := jsonHead{
		Name: p.Name, Target: string(p.Target), WorldSize: p.WorldSize, NNodes: p.NNodes,
		NProcPerNode: p.NProcPerNode, Rendezvous: p.Rendezvous, Notes: p.Notes, Env: map[string]string{},
	}
	for _, e := range p.Env {
		head.Env[e.Name] = e.Value
	}
	if p.PassTopology {
		head.Topology = p.Topology
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(head); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	// The head's closing "\n}\n" gives way to the nodes.
	bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n}\n")))
	bw.WriteString(",\n  \"nodes\": [")
	enc.SetIndent("    ", "  ")
	for i, n := range p.Nodes() {
		buf.Reset()
		if err := enc.Encode(jsonNode(n)); err != nil {
			return err
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	bw.WriteString("\n  ]\n}\n")
	return bw.Flush()
}
