package layout

import (
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/diag"
)

// Training holds the layout's training block: the Megatron training
// arguments that validate, estimate and suggest assume and that launch
// plans carry into the job. Each key is named as Megatron's argument, and
// the zero value of each field is what Megatron runs when the argument is
// absent (megatron/core/transformer/transformer_config.py,
// model_parallel_config.py, distributed/distributed_data_parallel_config.py
// and megatron/training/arguments.py at d98e8a6), so a layout that states a
// default and one that leaves it out are the same layout.
type Training struct {
	UseDistributedOptimizer bool
	SequenceParallel        bool
	RecomputeGranularity    string // "", "selective" or "full"
	RecomputeMethod         string // "", "uniform" or "block"
	RecomputeNumLayers      int    // 0: not given
	// RecomputeModules are the submodules selective recompute recomputes
	// (transformer_config.py:560 at d98e8a6); nil is Megatron's default,
	// core attention alone.
	RecomputeModules   []string
	OverlapGradReduce  bool
	OverlapParamGather bool
	TPCommOverlap      bool
	// GradReduceInBF16 is grad_reduce_in_fp32: false. Megatron-LM reduces
	// in fp32 under bf16 unless told otherwise (arguments.py:1209-1217,
	// --grad-reduce-in-bf16), as does Megatron-Bridge's bf16_mixed
	// (training/mixed_precision.py:47 at 067f987).
	GradReduceInBF16             bool
	MoETokenDispatcherType       string // "": allgather
	OverlapMoEExpertParallelComm bool
	// MoEExpertCapacityFactor caps each expert's tokens at this multiple
	// of its even share (the rest dropped); 0: none, dropless
	// (transformer_config.py:917 at d98e8a6). MoEPadExpertInputToCapacity
	// pads every expert's input to that capacity (:921).
	MoEExpertCapacityFactor     float64
	MoEPadExpertInputToCapacity bool
	TransformerImpl             string // "": transformer_engine
	AttentionBackend            string // "": auto
	FP8                         string // "": no fp8; e4m3 or hybrid
	// FP8ParamGather keeps the compute weights in fp8 only (no bf16 copy)
	// and all-gathers them in fp8: Megatron-LM's --fp8-param-gather
	// (arguments.py:2016 at d98e8a6), which every Megatron-Bridge fp8
	// recipe sets (training/mixed_precision.py:231, :264, :302 at 067f987).
	FP8ParamGather bool
	// NoOverlapP2PComm is overlap_p2p_comm: false. Megatron-LM overlaps the
	// interleaved schedule's pipeline sends with compute unless
	// --no-overlap-p2p-communication (store_false, arguments.py:3118 at
	// d98e8a6); without a virtual pipeline it turns the overlap off itself
	// (arguments.py:1010-1012).
	NoOverlapP2PComm bool
	// UsePrecisionAwareOptimizer lets Transformer Engine's FusedAdam keep
	// the main parameters and Adam's moments in the dtypes below
	// (--use-precision-aware-optimizer, arguments.py:3667 at d98e8a6); each
	// dtype is "" for Megatron's fp32 (arguments.py:3671-3684).
	UsePrecisionAwareOptimizer bool
	MainGradsDtype             string // "", "bf16"
	MainParamsDtype            string // "", "fp16"
	ExpAvgDtype                string // "", "fp16", "bf16", "fp8"
	ExpAvgSqDtype              string // "", "fp16", "bf16", "fp8"
	// NoGradientAccumulationFusion is gradient_accumulation_fusion: false.
	// Megatron-LM fuses the weight-gradient accumulation into the GEMMs
	// unless --no-gradient-accumulation-fusion (store_false, arguments.py:2944-2948
	// at d98e8a6), although ModelParallelConfig's own default is False
	// (model_parallel_config.py:250): core_transformer_config_from_args
	// passes the argument's True.
	NoGradientAccumulationFusion bool
	// DeferEmbeddingWgradCompute runs the output layer's weight-gradient
	// GEMMs of the first WgradDeferralLimit micro-batches (0: all of them)
	// in the pipeline flush (model_parallel_config.py:410-421 at d98e8a6).
	DeferEmbeddingWgradCompute bool
	WgradDeferralLimit         int
	// CrossEntropyLossFusion computes the language model's loss in one
	// fused kernel (model_parallel_config.py:320 at d98e8a6), Megatron's
	// own (native) or Transformer Engine's (te): CrossEntropyFusionImpl,
	// "" for native (:325).
	CrossEntropyLossFusion bool
	CrossEntropyFusionImpl string
}

// TrainingKey describes one key of the training block.
type TrainingKey struct {
	Name    string   // the layout key: Megatron's argument name
	Kind    string   // "bool", "enum", "int", "float" or "list" (of Values)
	Values  []string // an enum's values, Megatron's default first
	Default string   // Megatron's default, as written in a layout
	Doc     string   // what it is, for docs and hints
	// An int key's least value and what the error says it is.
	min     int
	minText string
	get     func(*Training) string
	set     func(*Training, string)
	// derived, when set, is the default as the other keys leave it
	// (Default is its value with every other key at its default).
	derived func(*Training) string
}

// trainingBool is a key that Megatron defaults to false.
func trainingBool(name, doc string, f func(*Training) *bool) TrainingKey {
	return TrainingKey{Name: name, Kind: "bool", Default: "false", Doc: doc,
		get: func(t *Training) string { return strconv.FormatBool(*f(t)) },
		set: func(t *Training, v string) { *f(t) = v == "true" },
	}
}

// trainingEnum is a key whose field holds "" for Megatron's default, values[0].
func trainingEnum(name, doc string, values []string, f func(*Training) *string) TrainingKey {
	return TrainingKey{Name: name, Kind: "enum", Values: values, Default: values[0], Doc: doc,
		get: func(t *Training) string {
			if *f(t) == "" {
				return values[0]
			}
			return *f(t)
		},
		set: func(t *Training, v string) {
			if v == values[0] {
				v = ""
			}
			*f(t) = v
		},
	}
}

var trainingKeys = []TrainingKey{
	trainingBool("use_distributed_optimizer", "shards the optimizer state (and with overlap_param_gather the parameter all-gather) over dp",
		func(t *Training) *bool { return &t.UseDistributedOptimizer }),
	trainingBool("sequence_parallel", "splits the sequence over tp outside the tensor-parallel regions; needs tp > 1",
		func(t *Training) *bool { return &t.SequenceParallel }),
	trainingEnum("recompute_granularity", "activation recomputation: none, selective (core attention) or full (whole layers)",
		[]string{"none", "selective", "full"}, func(t *Training) *string { return &t.RecomputeGranularity }),
	trainingEnum("recompute_method", "with full recompute: uniform (checkpoint every recompute_num_layers) or block (the first recompute_num_layers of each stage)",
		[]string{"none", "uniform", "block"}, func(t *Training) *string { return &t.RecomputeMethod }),
	{Name: "recompute_num_layers", Kind: "int", Default: "none", Doc: "layers per recompute unit (uniform) or recomputed layers per stage (block)",
		min: 1, minText: "a number of layers, at least 1",
		get: func(t *Training) string {
			if t.RecomputeNumLayers == 0 {
				return "none"
			}
			return strconv.Itoa(t.RecomputeNumLayers)
		},
		set: func(t *Training, v string) { t.RecomputeNumLayers, _ = strconv.Atoi(v) },
	},
	{Name: "recompute_modules", Kind: "list", Values: RecomputeModuleNames, Default: "[core_attn]",
		Doc: "with selective recompute, the submodules recomputed in backward: core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts",
		get: func(t *Training) string {
			if t.RecomputeModules == nil {
				return "[core_attn]"
			}
			return ListText(t.RecomputeModules)
		},
		set: func(t *Training, v string) {
			t.RecomputeModules = listItems(v)
			if slices.Equal(t.RecomputeModules, []string{"core_attn"}) {
				t.RecomputeModules = nil
			}
		},
	},
	trainingBool("overlap_grad_reduce", "overlaps the dp gradient reduction with the backward pass",
		func(t *Training) *bool { return &t.OverlapGradReduce }),
	trainingBool("overlap_param_gather", "overlaps the distributed optimizer's parameter all-gather with the forward pass",
		func(t *Training) *bool { return &t.OverlapParamGather }),
	trainingBool("tp_comm_overlap", "overlaps tensor-parallel communication with GEMMs (Transformer Engine userbuffers)",
		func(t *Training) *bool { return &t.TPCommOverlap }),
	{Name: "grad_reduce_in_fp32", Kind: "bool", Default: "true", Doc: "gradient buffers and their dp reduction in fp32 (false: bf16; the default is false with main_grads_dtype bf16)",
		get:     func(t *Training) string { return strconv.FormatBool(!t.GradReduceInBF16) },
		set:     func(t *Training, v string) { t.GradReduceInBF16 = v == "false" },
		derived: func(t *Training) string { return strconv.FormatBool(t.MainGradsDtype != "bf16") },
	},
	trainingEnum("moe_token_dispatcher_type", "how MoE layers send tokens to their experts",
		[]string{"allgather", "alltoall", "flex"}, func(t *Training) *string { return &t.MoETokenDispatcherType }),
	trainingBool("overlap_moe_expert_parallel_comm", "overlaps the MoE expert-parallel all-to-all with computation",
		func(t *Training) *bool { return &t.OverlapMoEExpertParallelComm }),
	{Name: "moe_expert_capacity_factor", Kind: "float", Default: "none", Doc: "caps each expert's tokens at this multiple of its even share, dropping the rest (none: dropless)",
		get: func(t *Training) string {
			if t.MoEExpertCapacityFactor == 0 {
				return "none"
			}
			return strconv.FormatFloat(t.MoEExpertCapacityFactor, 'g', -1, 64)
		},
		set: func(t *Training, v string) { t.MoEExpertCapacityFactor, _ = strconv.ParseFloat(v, 64) },
	},
	trainingBool("moe_pad_expert_input_to_capacity", "pads every expert's input to its capacity, so that the token counts are known without reading them back from the GPU; needs moe_expert_capacity_factor",
		func(t *Training) *bool { return &t.MoEPadExpertInputToCapacity }),
	trainingEnum("transformer_impl", "the layer implementation: Transformer Engine or Megatron's local (torch) layers",
		[]string{"transformer_engine", "local"}, func(t *Training) *string { return &t.TransformerImpl }),
	trainingEnum("attention_backend", "the core attention kernel: auto, flash, fused, unfused or local",
		[]string{"auto", "flash", "fused", "unfused", "local"}, func(t *Training) *string { return &t.AttentionBackend }),
	trainingEnum("fp8", "fp8 training recipe format: none, e4m3 or hybrid",
		[]string{"none", "e4m3", "hybrid"}, func(t *Training) *string { return &t.FP8 }),
	trainingBool("fp8_param_gather", "keeps the compute weights in fp8 only (no bf16 copy) and all-gathers them in fp8; needs fp8 and the distributed optimizer",
		func(t *Training) *bool { return &t.FP8ParamGather }),
	{Name: "overlap_p2p_comm", Kind: "bool", Default: "true", Doc: "overlaps the interleaved schedule's pipeline sends and receives with compute (false: batched, blocking sends; needs pp > 2 with a virtual pipeline)",
		get: func(t *Training) string { return strconv.FormatBool(!t.NoOverlapP2PComm) },
		set: func(t *Training, v string) { t.NoOverlapP2PComm = v == "false" },
	},
	trainingBool("use_precision_aware_optimizer", "Transformer Engine's FusedAdam keeps the main parameters and Adam's moments in the dtypes below; needs the distributed optimizer",
		func(t *Training) *bool { return &t.UsePrecisionAwareOptimizer }),
	trainingEnum("main_grads_dtype", "dtype of the gradients the optimizer reads (bf16: gradients accumulated and reduced in bf16); needs use_precision_aware_optimizer",
		[]string{"fp32", "bf16"}, func(t *Training) *string { return &t.MainGradsDtype }),
	trainingEnum("main_params_dtype", "dtype of the optimizer's main parameters; needs use_precision_aware_optimizer",
		[]string{"fp32", "fp16"}, func(t *Training) *string { return &t.MainParamsDtype }),
	trainingEnum("exp_avg_dtype", "dtype of Adam's first moment; needs use_precision_aware_optimizer",
		[]string{"fp32", "fp16", "bf16", "fp8"}, func(t *Training) *string { return &t.ExpAvgDtype }),
	trainingEnum("exp_avg_sq_dtype", "dtype of Adam's second moment; needs use_precision_aware_optimizer",
		[]string{"fp32", "fp16", "bf16", "fp8"}, func(t *Training) *string { return &t.ExpAvgSqDtype }),
	{Name: "gradient_accumulation_fusion", Kind: "bool", Default: "true", Doc: "fuses the weight-gradient accumulation into the GEMMs (Transformer Engine's, or Apex's fused_weight_gradient_mlp_cuda for Megatron's local linear layers and the output layer)",
		get: func(t *Training) string { return strconv.FormatBool(!t.NoGradientAccumulationFusion) },
		set: func(t *Training, v string) { t.NoGradientAccumulationFusion = v == "false" },
	},
	trainingBool("defer_embedding_wgrad_compute", "runs the output layer's weight-gradient GEMMs in the pipeline flush; needs pp > 1 and gradient_accumulation_fusion",
		func(t *Training) *bool { return &t.DeferEmbeddingWgradCompute }),
	{Name: "wgrad_deferral_limit", Kind: "int", Default: "0", Doc: "micro-batches whose output-layer weight gradient is deferred (0: all); at least 0 when deferring",
		min: -maxTrainingInt, minText: "a number of micro-batches (0: all)",
		get: func(t *Training) string { return strconv.Itoa(t.WgradDeferralLimit) },
		set: func(t *Training, v string) { t.WgradDeferralLimit, _ = strconv.Atoi(v) },
	},
	trainingBool("cross_entropy_loss_fusion", "computes the language model's loss in one fused kernel (cross_entropy_fusion_impl's)",
		func(t *Training) *bool { return &t.CrossEntropyLossFusion }),
	trainingEnum("cross_entropy_fusion_impl", "the fused loss's kernel: Megatron's own (native) or Transformer Engine's (te); with cross_entropy_loss_fusion",
		[]string{"native", "te"}, func(t *Training) *string { return &t.CrossEntropyFusionImpl }),
}

// TrainingKeys returns the training block's keys in the order layouts
// write them.
func TrainingKeys() []TrainingKey { return slices.Clone(trainingKeys) }

// Value returns the key's value in t as a layout writes it.
func (k TrainingKey) Value(t *Training) string { return k.get(t) }

// IsDefault reports whether t holds Megatron's default for the key, as
// t's other keys leave it.
func (k TrainingKey) IsDefault(t *Training) bool {
	if k.derived != nil {
		return k.get(t) == k.derived(t)
	}
	return k.get(t) == k.Default
}

// Set sets the key in t from its text as a layout writes it; it reports
// false, leaving t as it was, for a value the key does not take.
func (k TrainingKey) Set(t *Training, v string) bool {
	switch k.Kind {
	case "bool":
		if v != "true" && v != "false" {
			return false
		}
	case "enum":
		if !slices.Contains(k.Values, v) {
			return false
		}
	case "int":
		n, err := strconv.Atoi(v)
		if err != nil || n < k.min || n > maxTrainingInt || strconv.Itoa(n) != v {
			return false
		}
	case "float":
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x > 0) || x > maxTrainingFloat || strconv.FormatFloat(x, 'g', -1, 64) != v {
			return false
		}
	case "list":
		items := listItems(v)
		if items == nil || ListText(items) != v {
			return false
		}
		for _, x := range items {
			if !slices.Contains(k.Values, x) {
				return false
			}
		}
	}
	k.set(t, v)
	return true
}

// RecomputeModuleNames are the submodules recompute_modules may name:
// Megatron's choices (transformer_config.py:1944-1962 at d98e8a6) but those
// of models a layout cannot describe (Gated DeltaNet's and DeltaProduct's,
// mHC connections).
var RecomputeModuleNames = []string{"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"}

// ListText writes a list key's value as a layout writes it: [a, b].
func ListText(items []string) string { return "[" + strings.Join(items, ", ") + "]" }

// listItems reads ListText's form back; nil when v is not one.
func listItems(v string) []string {
	in, ok := strings.CutPrefix(v, "[")
	if !ok {
		return nil
	}
	if in, ok = strings.CutSuffix(in, "]"); !ok {
		return nil
	}
	items := strings.Split(in, ", ")
	for _, x := range items {
		if x == "" || strings.ContainsAny(x, ", []") {
			return nil
		}
	}
	return items
}

// maxTrainingInt bounds the int keys as num_layers is bounded.
const maxTrainingInt = 1 << 24

// maxTrainingFloat bounds the float keys (a capacity factor): above it a
// factor caps nothing a layout can hold.
const maxTrainingFloat = 1 << 24

// Stated returns the keys of t that differ from Megatron's defaults, with
// their values, in the order layouts write them.
func (t *Training) Stated() [][2]string {
	return t.stated(TrainingKey.IsDefault)
}

// Spelled is Stated with a derived default spelled out as well (each key
// against its Default alone): a launch plan's arguments say what the
// layout's other keys leave to Megatron too.
func (t *Training) Spelled() [][2]string {
	return t.stated(func(k TrainingKey, t *Training) bool { return k.get(t) == k.Default })
}

func (t *Training) stated(isDefault func(TrainingKey, *Training) bool) [][2]string {
	var out [][2]string
	for _, k := range trainingKeys {
		if !isDefault(k, t) {
			out = append(out, [2]string{k.Name, k.Value(t)})
		}
	}
	return out
}

func trainingKeyNames() []string {
	names := make([]string, len(trainingKeys))
	for i, k := range trainingKeys {
		names[i] = k.Name
	}
	return names
}

func (p *parser) training(fs map[string]field) {
	f, ok := fs["training"]
	if !ok {
		return
	}
	tf, ok := p.fields(f.value, "training", "", trainingKeyNames())
	if !ok {
		return
	}
	t := &Training{}
	good := true
	for _, k := range trainingKeys {
		v, ok := tf[k.Name]
		if !ok {
			continue
		}
		n := resolve(v.value)
		p.l.pos["training."+k.Name] = nodePos(n)
		good = p.trainingValue(t, k, v, n) && good
	}
	for _, k := range trainingKeys {
		if _, stated := tf[k.Name]; !stated && k.derived != nil {
			// Megatron-LM accumulates in fp32 by default only while the
			// main gradients are fp32 (arguments.py:1215-1216 at
			// d98e8a6): with bf16 ones it reduces in bf16 unless asked
			// otherwise, and then asserts (:1209-1210,
			// main-grads-dtype-needs-bf16-reduce).
			k.set(t, k.derived(t))
		}
	}
	if good {
		p.l.Training = t
	}
}

func (p *parser) trainingValue(t *Training, k TrainingKey, v field, n *yaml.Node) bool {
	name := "training." + k.Name
	switch k.Kind {
	case "bool":
		b, ok := p.boolean(v, name, "")
		return ok && k.Set(t, strconv.FormatBool(b))
	case "int":
		x, ok := p.integer(v, name, "", k.min, maxTrainingInt, k.minText)
		return ok && k.Set(t, strconv.Itoa(x))
	case "float":
		x, ok := p.positive(v, name, "", maxTrainingFloat, "a multiple of an expert's even share, above 0; leave it out for dropless MoE")
		return ok && k.Set(t, strconv.FormatFloat(x, 'g', -1, 64))
	case "list":
		return p.trainingList(t, k, n)
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && k.Set(t, n.Value) {
		return true
	}
	hint := enumList(k.Values)
	// A dtype one letter from another is another dtype, not a typo.
	if n.Kind == yaml.ScalarNode && !strings.HasSuffix(k.Name, "_dtype") {
		if s := suggest(n.Value, k.Values); s != "" {
			hint = "did you mean " + s + "? (" + hint + ")"
		}
	}
	p.d.Add(diag.RuleInvalidValue, nodePos(n), "", hint, "%s must be %s, got %s", name, orList(k.Values), describe(n))
	return false
}

// enumList names an enum's values, its default first and marked.
func enumList(values []string) string {
	return values[0] + " (the default), " + strings.Join(values[1:], ", ")
}

// orList joins values as "a, b or c".
func orList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// trainingList reads a list key: a YAML list of its Values, each reported
// where it is wrong.
func (p *parser) trainingList(t *Training, k TrainingKey, n *yaml.Node) bool {
	name := "training." + k.Name
	if n.Kind != yaml.SequenceNode {
		p.d.Add(diag.RuleInvalidValue, nodePos(n), "", "a list such as [core_attn, mla_up_proj]; "+orList(k.Values),
			"%s must be a list of %s, got %s", name, orList(k.Values), describe(n))
		return false
	}
	items, good := []string{}, true
	for i, e := range n.Content {
		e = resolve(e)
		if e.Kind != yaml.ScalarNode || e.Tag != "!!str" || !slices.Contains(k.Values, e.Value) {
			hint := enumList(k.Values)
			if e.Kind == yaml.ScalarNode {
				if s := suggest(e.Value, k.Values); s != "" {
					hint = "did you mean " + s + "? (" + hint + ")"
				}
			}
			p.d.Add(diag.RuleInvalidValue, nodePos(e), "", hint, "%s[%d] must be %s, got %s", name, i, orList(k.Values), describe(e))
			good = false
			continue
		}
		items = append(items, e.Value)
	}
	if good && len(items) == 0 {
		// Megatron-LM's flag takes one module at least (nargs "+").
		p.d.Add(diag.RuleInvalidValue, nodePos(n), "", "name a module, or set recompute_granularity: none to recompute nothing",
			"%s must name at least one of %s", name, orList(k.Values))
		return false
	}
	return good && k.Set(t, ListText(items))
}
