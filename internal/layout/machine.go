package layout

import (
	"strconv"

	"github.com/mimoplan/mimoplan/internal/diag"
)

// Machine is a cluster given from outside a suggest spec (suggest --probe:
// this node, as NVML sees it). It replaces the spec's world_size, cluster
// and cluster.gpu_memory.
type Machine struct {
	Cluster Cluster
	// GPUMemory is the memory of one GPU in bytes, a whole number of MiB
	// so that a written layout states it exactly.
	GPUMemory int64
	// About says what the machine is, for messages and the written
	// layout's comment ("this node: 8 x NVIDIA H100 80GB HBM3").
	About string
}

// WorldSize is the machine's number of GPUs.
func (m *Machine) WorldSize() int { return m.Cluster.Nodes * m.Cluster.GPUsPerNode }

// GPUMemoryText is GPUMemory as a layout writes it.
func (m *Machine) GPUMemoryText() string { return memoryString(m.GPUMemory) }

// Replacement is a value a spec gave that its Machine replaced.
type Replacement struct {
	Key     string // "world_size", "cluster.nodes", "cluster.gpus_per_node" or "cluster.gpu_memory"
	Pos     diag.Pos
	Spec    string // the spec's value
	Machine string // the machine's
}

// ParseSpecOn is ParseSpec for a spec planned on m: the spec's world_size
// and cluster may be left out, and m replaces whatever of them it gives
// (each value that differs is listed in Layout.Replaced). Values the spec
// gives are still read, so a malformed one is an error as in ParseSpec. A
// nil m is ParseSpec.
func ParseSpecOn(file string, data []byte, m *Machine) (*Layout, *diag.List) {
	return parse(&parser{spec: true, machine: m}, file, data)
}

// onMachine replaces what world read (ws from world_size, p.l.Cluster and
// p.l.GPUMemory) by the machine's, noting each value that differs.
func (p *parser) onMachine(ws int) {
	m := p.machine
	replace := func(key string, given bool, spec, machine string) {
		if given && spec != machine {
			p.l.Replaced = append(p.l.Replaced, Replacement{Key: key, Pos: p.l.Pos(key), Spec: spec, Machine: machine})
		}
	}
	replace("world_size", ws > 0, strconv.Itoa(ws), strconv.Itoa(m.WorldSize()))
	if c := p.l.Cluster; c != nil {
		replace("cluster.nodes", true, strconv.Itoa(c.Nodes), strconv.Itoa(m.Cluster.Nodes))
		replace("cluster.gpus_per_node", true, strconv.Itoa(c.GPUsPerNode), strconv.Itoa(m.Cluster.GPUsPerNode))
	}
	replace("cluster.gpu_memory", p.l.GPUMemory > 0, memoryString(p.l.GPUMemory), m.GPUMemoryText())
	c := m.Cluster
	p.l.Cluster, p.l.WorldSize, p.l.GPUMemory, p.l.Machine = &c, m.WorldSize(), m.GPUMemory, m
}

// memoryString writes bytes in the largest binary unit that holds them
// whole: 80GiB, 81559MiB.
func memoryString(b int64) string {
	switch {
	case b%(1<<30) == 0:
		return strconv.FormatInt(b>>30, 10) + "GiB"
	case b%(1<<20) == 0:
		return strconv.FormatInt(b>>20, 10) + "MiB"
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', -1, 64) + "MiB"
}
