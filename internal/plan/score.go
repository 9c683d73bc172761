package plan

import (
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/steptime"
)

// ModuleTime is one module's share of the step, in seconds per global
// batch, with its parts (the step-time model's) and its memory.
type ModuleTime struct {
	Name           string `json:"name" yaml:"name"`
	steptime.Parts `yaml:",inline"`
	// Idle is the fraction of the step this module waits for a slower one
	// (non-colocated modules run side by side).
	Idle float64 `json:"idle_fraction" yaml:"idle_fraction"`
	// MemoryBytes is the estimate for the module's most loaded GPU and
	// HeadroomBytes what is left of gpu_memory (0 when either is unknown).
	MemoryBytes   float64 `json:"memory_bytes" yaml:"memory_bytes"`
	HeadroomBytes float64 `json:"headroom_bytes" yaml:"headroom_bytes"`
}

// Score is a candidate's estimated time per global batch and its parts.
type Score struct {
	StepSeconds float64 `json:"step_s" yaml:"step_s"`
	// SumSeconds is the sum of the modules' times, the second key of the
	// ranking: among equal step times, the layout whose other modules
	// finish sooner (more slack) comes first.
	SumSeconds float64      `json:"sum_s" yaml:"sum_s"`
	Samples    int          `json:"samples_per_step" yaml:"samples_per_step"`
	Warnings   int          `json:"warnings" yaml:"warnings"`
	Modules    []ModuleTime `json:"modules" yaml:"modules"`
}

// stepModule is c as the step-time model reads it, with m micro-batches
// and params parameters on its most loaded GPU.
func stepModule(c *Choice, m int, params float64) steptime.Module {
	return steptime.Module{Offset: c.RankOffset, Ranks: c.NumRanks, TP: c.TP, GTPRemat: c.GTPRemat, CP: c.CP, PP: c.PP, VPP: c.VPP,
		DP: c.DP, EP: c.EP, ExptTP: c.ExptTP, Microbatches: m, Params: params}
}

// timeOf is module i's time as chosen in c by model k.
func (s *searcher) timeOf(k steptime.Model, i int, c *Choice, m int, params float64) ModuleTime {
	sm := stepModule(c, m, params)
	sm.Imbalance, sm.LastShort = steptime.Stages(&s.spec.Modules[i], parallel(&s.spec.Modules[i], c))
	return ModuleTime{Name: c.Name, Parts: k.Time(&s.shapes[i], sm)}
}

// boundSplit makes sm, a bound's module, a lower bound for module m's
// split: an uneven split may lighten the last stage, down to none of its
// layers (Module.LastShort).
func boundSplit(m *layout.Module, sm *steptime.Module) {
	if m.Model != nil && m.Split.Uneven() {
		sm.LastShort = 1
	}
}
