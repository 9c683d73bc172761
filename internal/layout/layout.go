// Package layout reads a mimoplan layout file (docs/layout.md) into a Spec,
// keeping the line and column of every value so that each diagnostic can
// point at the text that caused it.
package layout

import (
	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// Target names the runtime whose rules apply.
type Target string

const (
	TargetCore           Target = "core"
	TargetMegatronLM     Target = "megatron-lm"
	TargetMegatronBridge Target = "megatron-bridge"
)

// Targets lists the accepted targets.
var Targets = []Target{TargetCore, TargetMegatronLM, TargetMegatronBridge}

// MaxWorldSize bounds world_size and every size in a layout.
const MaxWorldSize = 1 << 24 // 16,777,216

// MaxFileSize bounds the input; real layouts are a few hundred bytes.
const MaxFileSize = 1 << 20

// Layout is a parsed layout. Sizes that were not given hold their default;
// a value that could not be read holds 0 and has a diagnostic.
type Layout struct {
	File    string
	Version int
	Name    string
	Target  Target
	// TargetVersion is the upstream version whose rules and argument
	// names apply (target_version); upstream.Latest() when not given.
	TargetVersion upstream.Version
	WorldSize     int // resolved from world_size or cluster; 0 if unknown
	Cluster       *Cluster
	Batch         *Batch
	Training      *Training // nil when not given
	// Env is the env block: the environment every rank gets, in the
	// order the layout states it (env.go).
	Env []EnvVar
	// GPUMemory is cluster.gpu_memory in bytes; 0 when not given.
	GPUMemory int64
	Modules   []Module

	// Colocated is a suggest spec's placement constraint: nil leaves it
	// open, true wants every module on the same ranks, false disjoint ones.
	Colocated *bool
	// Machine is the cluster that replaced the spec's own (ParseSpecOn),
	// and Replaced the values of the spec it replaced; nil otherwise.
	Machine  *Machine
	Replaced []Replacement

	pos map[string]diag.Pos
}

// Cluster is the machine shape.
type Cluster struct {
	Nodes       int
	GPUsPerNode int
}

// Batch holds the batch sizes the batch rules check.
type Batch struct {
	MicroBatchSize  int
	GlobalBatchSize int // 0 when not given
}

// Module is one module of the layout.
type Module struct {
	Name         string
	NumRanks     int // given, or derived from dp; 0 if unknown
	RankOffset   int
	TP           int
	GTPRemat     int
	CP           int
	PP           int
	DP           int // as given; 0 when not given
	EP           int
	ExptTP       int
	ExptGTPRemat int
	NumExperts   int // 0 when not given (or from model.num_experts)
	VPP          int // virtual pipeline stages per pp rank; 0 when not given
	// Split is the uneven pipeline split (Megatron-LM's
	// --decoder-first-pipeline-num-layers and the rest); zero: even.
	Split model.Split
	// Freeze is the module's freeze key: its weights do not train.
	Freeze bool
	Model  *Model

	// Broken is set when a value of this module could not be read, so that
	// later checks do not pile consequences on top of the real error.
	Broken bool
	// SizesUnread is set when a parallel size or a pipeline split key
	// could not be read: the rules that read the sizes (the model rules)
	// would judge defaults the file does not hold.
	SizesUnread bool
	// Unplaced is set when rank_offset was left out and the module before
	// is broken or unplaced, so that the span is unknown while the sizes
	// may still be checked.
	Unplaced bool

	// Constraints of a suggest spec (ParseSpec): 0 and false mean none.
	MaxTP     int
	AlignNode bool // the module's span starts and ends on node boundaries

	pos map[string]diag.Pos
}

// Pos returns the position of a top-level key's value ("world_size",
// "cluster.gpus_per_node", "batch.micro_batch_size", "modules"), or of the
// nearest enclosing node that was given.
func (l *Layout) Pos(key string) diag.Pos {
	if p, ok := l.pos[key]; ok {
		return p
	}
	for i := len(key) - 1; i > 0; i-- {
		if key[i] == '.' {
			if p, ok := l.pos[key[:i]]; ok {
				return p
			}
		}
	}
	return l.pos[""]
}

// Given reports whether a top-level key was present in the file.
func (l *Layout) Given(key string) bool {
	_, ok := l.pos[key]
	return ok
}

// Pos returns the position of a module field's value, or of the module
// itself when the field was not given.
func (m *Module) Pos(field string) diag.Pos {
	if p, ok := m.pos[field]; ok {
		return p
	}
	return m.pos[""]
}

// Given reports whether a module field was present in the file.
func (m *Module) Given(field string) bool {
	_, ok := m.pos[field]
	return ok
}

// End is one past the module's last rank.
func (m *Module) End() int { return m.RankOffset + m.NumRanks }
