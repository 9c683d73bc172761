package model

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Split is a module's uneven pipeline split, in Megatron-LM's arguments
// (--decoder-first-pipeline-num-layers and the rest). The zero value is
// the even split.
type Split struct {
	First            int    // decoder_first_pipeline_num_layers; 0: not given
	Last             int    // decoder_last_pipeline_num_layers; 0: not given
	AccountEmbedding bool   // account_for_embedding_in_pipeline_split
	AccountLoss      bool   // account_for_loss_in_pipeline_split
	Layout           string // pipeline_model_parallel_layout ("Et*4|(t*4|)*14,tmL"); "": none
}

// Uneven reports whether the split departs from num_layers / pp.
func (s Split) Uneven() bool { return s != Split{} }

// Rule ids of the pipeline-split rules.
const (
	RuleSplitConflict       = "pipeline-split-conflict"
	RuleSplitUneven         = "pipeline-split-uneven"
	RuleLayoutInvalid       = "pipeline-layout-invalid"
	RuleSplitLayersMismatch = "pipeline-split-layers-mismatch"
)

// splitErr is the first check of Megatron-LM's that a split fails: its
// rule, the layout key it is about, and the upstream line (src) that
// raises, which the fixture test compares with upstream's own run.
type splitErr struct {
	rule, key, src, msg, hint string
}

// Megatron-LM@d98e8a64ddf3 files whose lines the split checks name.
const (
	srcArgs   = "megatron/training/arguments.py:"
	srcConfig = "megatron/core/transformer/transformer_config.py:"
	srcBlock  = "megatron/core/transformer/transformer_block.py:"
	srcLayout = "megatron/core/transformer/pipeline_parallel_layer_layout.py:"
)

// maxLayoutChars bounds an unrolled pipeline_model_parallel_layout: far
// above any model's layers, far below what would exhaust memory.
const maxLayoutChars = 1 << 20

var (
	layoutGroup  = regexp.MustCompile(`\(([^)]+)\)\*(\d+)`)
	layoutRepeat = regexp.MustCompile(`(.)\*(\d+)`)
)

// Layer kinds of a pipeline_model_parallel_layout (LayerType).
const (
	layerEmbedding = 'E'
	layerLoss      = 'L'
	layerDecoder   = 't'
	layerMTP       = 'm'
)

// parseLayout is PipelineParallelLayerLayout.parse_str_to_list: commas
// dropped, "(...)*n" then "x*n" unrolled once each, stages split at "|".
func parseLayout(s string) ([]string, error) {
	s = strings.ReplaceAll(s, ",", "")
	for _, re := range []*regexp.Regexp{layoutGroup, layoutRepeat} {
		var err error
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			g := re.FindStringSubmatch(m)
			n, e := strconv.Atoi(g[2])
			if e != nil || n > maxLayoutChars || len(g[1])*n > maxLayoutChars {
				err = fmt.Errorf("%q repeats more than %d layers", m, maxLayoutChars)
				return ""
			}
			return strings.Repeat(g[1], n)
		})
		if err != nil {
			return nil, err
		}
		if len(s) > maxLayoutChars {
			return nil, fmt.Errorf("it unrolls to more than %d layers", maxLayoutChars)
		}
	}
	stages := strings.Split(s, "|")
	for _, st := range stages {
		for _, ch := range st {
			if !strings.ContainsRune("ELtm", ch) {
				return nil, fmt.Errorf("invalid layer character %q in stage %q (known: E embedding, L loss, t decoder, m mtp)", ch, st)
			}
		}
	}
	return stages, nil
}

// VirtualPipeline is the virtual pipeline size Megatron-LM's validate_args
// derives at pp stages (arguments.py:945-950): a
// pipeline_model_parallel_layout's stage count / pp when one is given,
// else vpp; 0 for none (1 is none, and so is a layout upstream's parser
// refuses). exact is false when the layout is refused or its stages are not
// a multiple of pp (pipeline-layout-invalid); v is then the floor, and what
// that means is the caller's to decide.
func VirtualPipeline(vpp, pp int, layout string) (v int, exact bool) {
	if layout == "" {
		return virtualPipeline(vpp, pp, false, 0)
	}
	stages, err := LayoutStages(layout)
	if err != nil {
		return 0, false
	}
	return virtualPipeline(vpp, pp, true, stages)
}

// virtualPipeline is VirtualPipeline once the layout, if given, is parsed
// into stages (checkSplit has them at hand). pp below 1 counts as 1.
func virtualPipeline(vpp, pp int, layout bool, stages int) (int, bool) {
	exact := true
	if layout {
		pp = max(pp, 1)
		vpp, exact = stages/pp, stages%pp == 0
	}
	if vpp <= 1 {
		return 0, exact
	}
	return vpp, exact
}

// StageLayers returns the transformer layers each pipeline rank builds
// (summed over its virtual stages), as Megatron-LM's
// get_num_layers_to_build gives them, or nil when the split breaks a rule
// (Check says which). Sizes of 0 are treated as 1.
func StageLayers(cfg Config, par Parallel) []int {
	c := cfg.Resolve()
	p := par
	if p.PP < 1 {
		p.PP = 1
	}
	errs, chunks := checkSplit(c.NumLayers, c.MTPNumLayers, p)
	if len(errs) > 0 {
		return nil
	}
	out := make([]int, len(chunks))
	for r, row := range chunks {
		for _, n := range row {
			out[r] += n
		}
	}
	return out
}

// checkSplit runs Megatron-LM's checks of a pipeline split in upstream's
// order (validate_args, TransformerConfig.__post_init__ and
// PipelineParallelLayerLayout, get_num_layers_to_build for every stage)
// and stops at the first that fails, as upstream does. It returns the
// decoder layers of every (pp rank, virtual stage) chunk.
func checkSplit(layers, mtp int, p Parallel) ([]splitErr, [][]int) {
	s := p.Split
	pp := p.PP
	fail := func(rule, key, src, hint, format string, args ...any) ([]splitErr, [][]int) {
		return []splitErr{{rule, key, src, fmt.Sprintf(format, args...), hint}}, nil
	}
	var stages []string
	if s.Layout != "" {
		if p.VPP > 0 {
			return fail(RuleSplitConflict, "vpp", srcArgs+"928", "remove vpp: the layout's stage count gives it",
				"vpp and pipeline_model_parallel_layout are both given")
		}
		var err error
		if stages, err = parseLayout(s.Layout); err != nil {
			return fail(RuleLayoutInvalid, "pipeline_model_parallel_layout", srcLayout+"315", "write stages of E, t, m and L separated by |",
				"pipeline_model_parallel_layout: %v", err)
		}
		if len(stages)%pp != 0 {
			return fail(RuleLayoutInvalid, "pipeline_model_parallel_layout", srcArgs+"945", fmt.Sprintf("give a multiple of pp (%d) stages", pp),
				"pipeline_model_parallel_layout has %d stages, not a multiple of pp (%d)", len(stages), pp)
		}
	}
	vpp, _ := virtualPipeline(p.VPP, pp, s.Layout != "", len(stages))
	extra := 0
	if s.AccountEmbedding {
		extra++
	}
	if s.AccountLoss {
		extra++
	}
	uneven := s.First > 0 || s.Last > 0
	if s.Layout == "" && vpp == 0 && !uneven && (layers+extra)%pp != 0 {
		return fail(RuleLayersNotDivisible, "model.num_layers", srcArgs+"997", divisorsHint("pp", layers+extra, pp),
			"num_layers (%d)%s is not divisible by pp (%d)", layers, accounted(s), pp)
	}
	if vpp > 0 && pp == 1 {
		return fail(RuleVPPNeedsPP, "vpp", srcArgs+"1002", "remove vpp, or use pp > 1",
			"vpp %d needs pp > 1: the interleaved schedule interleaves pipeline stages", vpp)
	}
	acc := s.AccountEmbedding || s.AccountLoss
	if uneven && acc {
		return fail(RuleSplitConflict, splitKey(s), srcConfig+"2235", "use either the first/last stage sizes or the account_for_* keys",
			"decoder_first/last_pipeline_num_layers and account_for_embedding/loss_in_pipeline_split exclude one another")
	}
	switch {
	case s.Layout != "":
		if uneven || acc {
			return fail(RuleSplitConflict, "pipeline_model_parallel_layout", srcConfig+"2252", "the layout places every layer: remove the other pipeline split keys",
				"pipeline_model_parallel_layout excludes decoder_first/last_pipeline_num_layers and account_for_embedding/loss_in_pipeline_split")
		}
		return layoutChunks(stages, pp, layers, mtp)
	case uneven:
		return unevenChunks(layers, p, vpp)
	}
	if (layers+extra)%pp != 0 {
		src := srcConfig + "2383"
		if !acc {
			src = srcBlock + "156"
		}
		if acc && vpp > 0 {
			src = srcConfig + "2396"
		}
		return fail(RuleLayersNotDivisible, "model.num_layers", src, divisorsHint("pp", layers+extra, pp),
			"num_layers (%d)%s is not divisible by pp (%d)", layers, accounted(s), pp)
	}
	per := (layers + extra) / pp
	if vpp > 0 && per%vpp != 0 {
		src := srcBlock + "175"
		if acc {
			src = srcConfig + "2409"
		}
		return fail(RuleLayersNotDivisibleVPP, "vpp", src, divisorsHint("vpp", per, vpp),
			"the %d layers of each pipeline stage (num_layers %d%s / pp %d) are not divisible by vpp (%d)", per, layers, plusAccounted(s), pp, vpp)
	}
	chunks := evenChunks(pp, vpp, per)
	if s.AccountEmbedding {
		chunks[0][0]--
	}
	if s.AccountLoss {
		row := chunks[pp-1]
		row[len(row)-1]--
	}
	return nil, chunks
}

func sumChunks(chunks [][]int) int {
	n := 0
	for _, row := range chunks {
		for _, x := range row {
			n += x
		}
	}
	return n
}

// evenChunks gives every (pp rank, virtual stage) chunk per/vpp layers.
func evenChunks(pp, vpp, per int) [][]int {
	nv := max(vpp, 1)
	chunks := make([][]int, pp)
	for r := range chunks {
		chunks[r] = make([]int, nv)
		for v := range chunks[r] {
			chunks[r][v] = per / nv
		}
	}
	return chunks
}

// unevenChunks is TransformerConfig's check of the first/last stage sizes
// and get_num_layers_to_build's split: the middle stages share the rest.
// Python's arithmetic is kept where pp is 1 and both are given (a middle
// of -1 stages).
func unevenChunks(layers int, p Parallel, vpp int) ([]splitErr, [][]int) {
	s, pp := p.Split, p.PP
	fail := func(key, src, hint, format string, args ...any) ([]splitErr, [][]int) {
		return []splitErr{{RuleSplitUneven, key, src, fmt.Sprintf(format, args...), hint}}, nil
	}
	rest, left := layers, pp
	if s.First > 0 {
		if vpp > 0 && s.First%vpp != 0 {
			return fail("decoder_first_pipeline_num_layers", srcConfig+"2312", fmt.Sprintf("a multiple of vpp (%d)", vpp),
				"decoder_first_pipeline_num_layers (%d) is not divisible by vpp (%d)", s.First, vpp)
		}
		rest -= s.First
		left--
	}
	if s.Last > 0 {
		if vpp > 0 && s.Last%vpp != 0 {
			return fail("decoder_last_pipeline_num_layers", srcConfig+"2331", fmt.Sprintf("a multiple of vpp (%d)", vpp),
				"decoder_last_pipeline_num_layers (%d) is not divisible by vpp (%d)", s.Last, vpp)
		}
		rest -= s.Last
		left--
	}
	key := splitKey(s)
	if (rest != 0) != (left != 0) {
		return fail(key, srcConfig+"2342", fmt.Sprintf("first and last stages that hold all %d layers", layers),
			"%d layers are left for %d middle pipeline stages (num_layers %d, pp %d)", rest, max(left, 0), layers, pp)
	}
	per := 0
	if left != 0 {
		if pyMod(rest, left) != 0 {
			return fail(key, srcConfig+"2350", fmt.Sprintf("first/last sizes that leave a multiple of %d layers", left),
				"the %d middle layers are not divisible by the %d middle pipeline stages", rest, left)
		}
		per = pyDiv(rest, left)
		if vpp > 0 && pyMod(per, vpp) != 0 {
			return fail(key, srcConfig+"2364", fmt.Sprintf("first/last sizes that leave each middle stage a multiple of vpp (%d) layers", vpp),
				"each middle pipeline stage's %d layers are not divisible by vpp (%d)", per, vpp)
		}
	}
	if left <= 0 {
		per = 0 // get_num_layers_to_build: no middle stages
	}
	nv := max(vpp, 1)
	chunks := make([][]int, pp)
	for r := range chunks {
		n := per
		if r == 0 && s.First > 0 {
			n = s.First
		}
		if r == pp-1 && s.Last > 0 {
			n = s.Last
		}
		chunks[r] = make([]int, nv)
		for v := range chunks[r] {
			chunks[r][v] = n / nv
		}
	}
	return nil, chunks
}

// layoutChunks is PipelineParallelLayerLayout's 2D layout and
// validate_layer_layout; it returns the decoder layers of each chunk.
func layoutChunks(stages []string, pp, layers, mtp int) ([]splitErr, [][]int) {
	fail := func(src, hint, format string, args ...any) ([]splitErr, [][]int) {
		return []splitErr{{RuleLayoutInvalid, "pipeline_model_parallel_layout", src, fmt.Sprintf(format, args...), hint}}, nil
	}
	nv := len(stages) / pp
	at := func(r, v int) string { return stages[v*pp+r] }
	flat := strings.Join(stages, "")
	switch {
	case len(flat) == 0 || flat[0] != layerEmbedding:
		return fail(srcLayout+"95", "begin the first stage with E", "pipeline_model_parallel_layout must begin with the embedding (E)")
	case flat[len(flat)-1] != layerLoss:
		return fail(srcLayout+"98", "end the last stage with L", "pipeline_model_parallel_layout must end with the loss (L)")
	case strings.Count(flat, "E") != 1:
		return fail(srcLayout+"103", "one E", "pipeline_model_parallel_layout has %d embeddings (E), not 1", strings.Count(flat, "E"))
	case strings.Count(flat, "L") != 1:
		return fail(srcLayout+"106", "one L", "pipeline_model_parallel_layout has %d losses (L), not 1", strings.Count(flat, "L"))
	case strings.Count(flat, "t") != layers:
		return fail(srcLayout+"107", fmt.Sprintf("%d t", layers), "pipeline_model_parallel_layout has %d decoder layers (t), num_layers is %d", strings.Count(flat, "t"), layers)
	case strings.Count(flat, "m") != mtp:
		return fail(srcLayout+"112", fmt.Sprintf("%d m (mtp_num_layers)", mtp), "pipeline_model_parallel_layout has %d MTP layers (m), mtp_num_layers is %d", strings.Count(flat, "m"), mtp)
	}
	if i := strings.IndexByte(flat, layerMTP); i >= 0 && strings.IndexByte(flat[i:], layerDecoder) >= 0 {
		return fail(srcLayout+"117", "put every t before the first m", "pipeline_model_parallel_layout places decoder layers after MTP layers")
	}
	for r := 0; r < pp; r++ {
		for v := 0; v < nv-1; v++ {
			if strings.IndexByte(at(r, v), layerMTP) >= 0 {
				return fail(srcLayout+"123", "put MTP layers in a rank's last virtual stage",
					"pipeline rank %d holds MTP layers in virtual stage %d, not its last", r, v)
			}
		}
	}
	for r := 0; r < pp; r++ {
		if last := at(r, nv-1); strings.IndexByte(last, layerMTP) >= 0 && strings.Count(last, "m") != mtp {
			return fail(srcLayout+"129", "put all MTP layers in one stage", "the MTP layers are split over several stages")
		}
	}
	chunks := make([][]int, pp)
	for r := range chunks {
		chunks[r] = make([]int, nv)
		for v := range chunks[r] {
			chunks[r][v] = strings.Count(at(r, v), "t")
		}
	}
	return nil, chunks
}

// pyMod and pyDiv are Python's % and // (floor), which the middle-stage
// arithmetic uses with a negative stage count when pp is 1.
func pyMod(a, b int) int {
	m := a % b
	if m != 0 && (m < 0) != (b < 0) {
		m += b
	}
	return m
}

func pyDiv(a, b int) int { return (a - pyMod(a, b)) / b }

func splitKey(s Split) string {
	switch {
	case s.First > 0:
		return "decoder_first_pipeline_num_layers"
	case s.Last > 0:
		return "decoder_last_pipeline_num_layers"
	case s.AccountEmbedding:
		return "account_for_embedding_in_pipeline_split"
	}
	return "account_for_loss_in_pipeline_split"
}

// accounted names the embedding and loss counted as layers, for messages.
func accounted(s Split) string {
	if p := plusAccounted(s); p != "" {
		return " with" + p
	}
	return ""
}

func plusAccounted(s Split) string {
	var b strings.Builder
	if s.AccountEmbedding {
		b.WriteString(" + embedding")
	}
	if s.AccountLoss {
		b.WriteString(" + loss")
	}
	return b.String()
}

func divisorsHint(what string, n, x int) string {
	return fmt.Sprintf("%s a divisor of %d (%s)", what, n, divisorsUpTo(n, x))
}

// LayoutStages returns the number of pipeline stages (pp * vpp) a
// pipeline_model_parallel_layout string describes, or why upstream's
// parser would refuse it.
func LayoutStages(s string) (int, error) {
	st, err := parseLayout(s)
	return len(st), err
}
