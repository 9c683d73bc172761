// Package topo is the model of a checked layout that everything after the
// rules reads: its modules with their grids, how their spans relate, and
// the layout they came from (for positions in messages). validate
// produces it; render, launch, preflight and diff read it.
package topo

import (
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// Mode is how module spans relate.
type Mode string

const (
	Colocated    Mode = "colocated"     // every module spans the same ranks
	NonColocated Mode = "non_colocated" // spans are disjoint and tile the world
)

// Topology is a layout's modules with their grids, in layout order.
type Topology struct {
	Name      string
	Target    layout.Target
	WorldSize int
	Mode      Mode
	Cluster   *layout.Cluster
	Batch     *layout.Batch
	Modules   []*grid.Module
	// Layout is the layout the topology was built from: its positions
	// place the diagnostics of those that read the topology (launch).
	Layout *layout.Layout
}

// Module returns the module with the given name, or nil.
func (t *Topology) Module(name string) *grid.Module {
	for _, m := range t.Modules {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Nodes returns the number of nodes and GPUs per node: the cluster's, or
// the whole world on one node for a layout without a cluster.
func (t *Topology) Nodes() (nodes, gpusPerNode int) {
	if t.Cluster != nil {
		return t.Cluster.Nodes, t.Cluster.GPUsPerNode
	}
	return 1, t.WorldSize
}
