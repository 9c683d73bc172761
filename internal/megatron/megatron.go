// Package megatron is the vocabulary of the programs mimoplan launches and
// imports: the argument names of Megatron-LM's MIMO example
// (examples/mimo/pretrain_mimo.py, its args.py and Megatron's own
// arguments.py) per upstream version, and the MIMO_* variables of
// Megatron-Bridge's llava examples. launch writes these names and importer
// reads them back; neither spells one itself. It does no I/O.
package megatron

import "github.com/mimoplan/mimoplan/internal/upstream"

// Grid holds the grid argument names of one generation of Megatron-LM's
// examples/mimo/training/args.py (add_hetero_grid_args).
type Grid struct {
	EncoderTP, EncoderDP                                    string
	LLMOffset, LLMTP, LLMCP, LLMPP, LLMDP, LLMEP, LLMExptTP string
	LLMOnly                                                 string
	// EncoderDDPOverlap is args.py's switch of the encoder's DDP overlap,
	// which the layout does not set.
	EncoderDDPOverlap string
}

// GridArg is one grid argument of args.py: its name without "--" and
// without PR #6894's "mimo-" prefix, and args.py's default.
type GridArg struct {
	Key     string
	Default int
}

// GridArgs are args.py's grid arguments that take a number, with its
// defaults (add_hetero_grid_args: encoder tp 2, dp 2; language offset 4,
// tp 2, cp 1, pp 1, dp 2, ep 1, expt_tp 1), in the order launch-plan
// writes them.
var GridArgs = []GridArg{
	{"encoder-tp", 2}, {"encoder-dp", 2}, {"llm-offset", 4}, {"llm-tp", 2}, {"llm-cp", 1},
	{"llm-pp", 1}, {"llm-dp", 2}, {"llm-ep", 1}, {"llm-expt-tp", 1},
}

// The flags of args.py that take no value.
const (
	KeyLLMOnly           = "llm-only"
	KeyEncoderDDPOverlap = "encoder-ddp-overlap"
)

func gridNames(prefix string) Grid {
	n := func(k string) string { return "--" + prefix + k }
	return Grid{
		n("encoder-tp"), n("encoder-dp"),
		n("llm-offset"), n("llm-tp"), n("llm-cp"), n("llm-pp"), n("llm-dp"), n("llm-ep"), n("llm-expt-tp"),
		n(KeyLLMOnly), n(KeyEncoderDDPOverlap),
	}
}

// MimoPrefix is what PR #6894 put before every grid name.
const MimoPrefix = "mimo-"

var (
	// Plain are the names of args.py from its start (Megatron-LM PR
	// #5375) until PR #6894.
	Plain = gridNames("")
	// Mimo are the names since Megatron-LM PR #6894, which prefixed every
	// grid argument with --mimo- and made the plain names an error.
	Mimo = gridNames(MimoPrefix)
)

// GridFor returns the grid names of version v, and the other set, which
// that version's args.py rejects.
func GridFor(v upstream.Version) (names, other Grid) {
	if v.Has(upstream.PRMimoNames) {
		return Mimo, Plain
	}
	return Plain, Mimo
}

// Layout returns the names that the layout sets, in the order launch-plan
// writes them (the encoder's DDP overlap is not one).
func (g Grid) Layout() []string {
	return []string{g.EncoderTP, g.EncoderDP, g.LLMOffset, g.LLMTP, g.LLMCP, g.LLMPP, g.LLMDP, g.LLMEP, g.LLMExptTP, g.LLMOnly}
}

// All returns every name of the generation.
func (g Grid) All() []string { return append(g.Layout(), g.EncoderDDPOverlap) }

// Megatron-LM's own arguments (megatron/training/arguments.py) that the
// layout sets beside the grid.
const (
	MicroBatch   = "--micro-batch-size"
	GlobalBatch  = "--global-batch-size"
	NumExperts   = "--num-experts"
	WeightShards = "--tensor-parallel-num-weight-shards"
	ExpertShards = "--expert-tensor-parallel-num-weight-shards"
)

// Counts are the arguments above, which take a whole number.
var Counts = []string{MicroBatch, GlobalBatch, NumExperts, WeightShards, ExpertShards}
