// Package upstream is the one table of the Megatron-LM and Megatron-Bridge
// changes that move mimoplan's rules or the arguments it writes. validate and launch both
// read it, so that a layout's target_version (or --target-version) gives
// the rules and the flag names upstream had at that point.
package upstream

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Change is one merged upstream pull request that matters to mimoplan.
type Change struct {
	PR     int
	Repo   string // MegatronLM or MegatronBridge
	Merged string // merge date, YYYY-MM-DD
	// Commit is the merge commit in the repository's mirror, "" for one
	// after the Megatron-LM mirror's HEAD (d98e8a64ddf3, 2026-08-22).
	Commit string
	Kind   string // "flag" or "rule"
	What   string
}

// The repositories of Changes.
const (
	MegatronLM     = "Megatron-LM"
	MegatronBridge = "Megatron-Bridge"
)

// PRs mimoplan tells apart. The two repositories' numbers do not collide
// among these, so a bare number names one change.
const (
	PRBridgeTraining  = 2869 // Bridge: MIMO training; tp power of two, dp pairwise divisible, encoder dp >= language dp
	PRBridgeEncoderDP = 4071 // Bridge: the encoder dp >= language dp check dropped
	PRBridgeExpert    = 4485 // Bridge: expert_model_parallel_size; encoders dense; spans tile the world

	PRTECrossEntropyOff  = 5115 // Megatron-LM and ModelParallelConfig refuse Transformer Engine's fused loss
	PRTECrossEntropyWarn = 5162 // ModelParallelConfig only warns of it; Megatron-LM's arguments still refuse

	PRArgs          = 5375 // examples/mimo/training/args.py: --encoder-*/--llm-*
	PRDistOpt       = 5602 // the MIMO example refuses to start without --use-distributed-optimizer
	PRBridgeGTP     = 6263 // BridgeCommunicator leaders per (dp, gtp_remat) lane
	PRGTP           = 6570 // GTP in the MIMO example; fan-out counts GTP lanes
	PRDestinationCP = 5720 // BridgeCommunicator: cp above 1 on the destination
	PRMimoNames     = 6894 // --mimo-* names; the plain ones an error
	PRLLMCP         = 7435 // the MIMO example: language cp above 1 when non-colocated
)

// Changes are in merge order. The list is the rules table of
// docs/rules.md (a test keeps the two equal).
var Changes = []Change{
	{PRBridgeTraining, MegatronBridge, "2026-04-10", "0bf1333ce040e29da983bfa7dfe15ac59a5e0c30", "rule",
		"Megatron-Bridge trains MIMO models on per-module grids (MimoParallelismConfig): tp a power of two (tp-not-power-of-two), every pair of dps divides one another (dp-not-compatible) and each encoder's dp at least the language dp (bridge-encoder-dp-below-language-dp); before it target megatron-bridge has nothing to check or write"},
	{PRBridgeEncoderDP, MegatronBridge, "2026-06-02", "4b68d3e5928e5a14bc705e267a08c4cc000894b7", "rule",
		"Megatron-Bridge drops the encoder dp >= language dp check (bridge-encoder-dp-below-language-dp no longer applies)"},
	{PRTECrossEntropyOff, MegatronLM, "2026-06-03", "168cb15d70ad4a3ca9e3b3e396adc6201a6f50ff", "rule",
		"Transformer Engine's fused loss is disabled for its stability: cross_entropy_loss_fusion with cross_entropy_fusion_impl te is refused by Megatron-LM's validate_args and ModelParallelConfig (te-cross-entropy-fusion-disabled); before it every target accepts it"},
	{PRTECrossEntropyWarn, MegatronLM, "2026-06-05", "b57449928aafaaec7a36e8325d83aacf05e91bd4", "rule",
		"ModelParallelConfig only warns of Transformer Engine's fused loss (te-cross-entropy-fusion-unstable): targets core and megatron-bridge accept it again; Megatron-LM's validate_args still refuses it (te-cross-entropy-fusion-disabled, target megatron-lm)"},
	{PRArgs, MegatronLM, "2026-06-23", "b1884d11b4507d8a26d8d66d0f01892284213892", "flag",
		"Megatron-LM's MIMO example takes its grids as arguments: --encoder-tp --encoder-dp --llm-offset --llm-tp --llm-cp --llm-pp --llm-dp --llm-ep --llm-expt-tp --llm-only; before it target megatron-lm has no arguments to write"},
	{PRDistOpt, MegatronLM, "2026-07-02", "052209940d60315143c7df60d3fde0e1d969bba1", "rule",
		"the MIMO example's pretrain_mimo.py trains heterogeneous MIMO only with the distributed optimizer: without --use-distributed-optimizer it raises before building anything (mimo-needs-distributed-optimizer)"},
	{PRBridgeExpert, MegatronBridge, "2026-07-13", "fc35d9b08a6c04a2f269038da4633e2cc9a1ae26", "flag",
		"Megatron-Bridge's ModuleParallelismConfig takes expert_model_parallel_size and leaves expert_tensor_parallel_size out of a module's rank count: the language module may be MoE, encoders stay dense (encoder-not-dense); before it ep and expt_tp must be 1 (bridge-expert-needs-newer-version) and --format bridge writes no expert_model_parallel_size"},
	{PRBridgeGTP, MegatronLM, "2026-08-04", "9a3c40b25408f9c5f4ed87500989ebe299f88fea", "rule",
		"BridgeCommunicator elects a leader per data lane, dp x gtp_remat (bridge-leaders-not-divisible counts gtp_remat); before it, per dp replica"},
	{PRGTP, MegatronLM, "2026-08-18", "cfb8e46ffe08fa027c38ffbe3898e7d8937bd019", "rule",
		"the MIMO example takes GTP (--tensor-parallel-num-weight-shards, --expert-tensor-parallel-num-weight-shards) and its fan-out check counts GTP lanes; before it target megatron-lm needs gtp_remat and expt_gtp_remat 1 (gtp-needs-newer-version)"},
	{PRDestinationCP, MegatronLM, "2026-08-26", "", "rule",
		"BridgeCommunicator accepts cp above 1 on its destination, the language module (target core); the encoder keeps cp 1 (bridge-cp-unsupported)"},
	{PRMimoNames, MegatronLM, "2026-08-26", "", "flag",
		"every grid argument is renamed --mimo-* (--mimo-encoder-tp ... --mimo-llm-only) and the plain names are an error"},
	{PRLLMCP, MegatronLM, "2026-09-21", "", "rule",
		"the MIMO example trains the language module with cp above 1 (--mimo-llm-cp) beside an encoder on other ranks, the encoder and projector keeping cp 1 (cp-unsupported no longer applies to such a language module); read in the PR's thread, its code is not in the mirror; merged after the thread's last comment, of 2026-09-21"},
}

// Version is a point in upstream history: the changes merged by then.
type Version struct {
	// Text is the version as given ("" for the newest).
	Text string
	n    int // Changes[:n] are in
}

// Latest is the newest version mimoplan knows, the default.
func Latest() Version { return Version{n: len(Changes)} }

// Has reports whether the change of pr is in v.
func (v Version) Has(pr int) bool {
	for i := 0; i < v.n; i++ {
		if Changes[i].PR == pr {
			return true
		}
	}
	return false
}

// String names v as the user gave it, or "newest".
func (v Version) String() string {
	if v.Text == "" {
		return "newest (" + Changes[len(Changes)-1].Merged + ", PR #" + strconv.Itoa(Changes[len(Changes)-1].PR) + ")"
	}
	return v.Text
}

// Help lists the accepted forms, for messages.
func Help() string {
	var lm, bridge []string
	for _, c := range Changes {
		if c.Repo == MegatronBridge {
			bridge = append(bridge, strconv.Itoa(c.PR))
		} else {
			lm = append(lm, strconv.Itoa(c.PR))
		}
	}
	return "a date YYYY-MM-DD (upstream as of that day) or a PR number (Megatron-LM " + strings.Join(lm, ", ") +
		"; Megatron-Bridge " + strings.Join(bridge, ", ") + ": upstream right after it merged)"
}

// Parse reads a target version: "" (newest), a date YYYY-MM-DD, or the
// number of a PR of Changes, with or without '#'.
func Parse(s string) (Version, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Latest(), nil
	}
	if d, err := time.Parse("2006-01-02", t); err == nil {
		n := 0
		for n < len(Changes) {
			m, _ := time.Parse("2006-01-02", Changes[n].Merged)
			if m.After(d) {
				break
			}
			n++
		}
		return Version{Text: t, n: n}, nil
	}
	num := strings.TrimPrefix(t, "#")
	pr, err := strconv.Atoi(num)
	if err != nil || num == "" || num[0] < '0' || num[0] > '9' {
		return Version{}, fmt.Errorf("target version %q is not %s", s, Help())
	}
	for i, c := range Changes {
		if c.PR == pr {
			return Version{Text: "#" + num, n: i + 1}, nil
		}
	}
	return Version{}, fmt.Errorf("target version %q: mimoplan knows no change of PR #%d; give %s", s, pr, Help())
}
