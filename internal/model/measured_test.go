package model

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// measuredArgs are one module's arguments in a measured run, under
// Megatron's names.
type measuredArgs struct {
	NumLayers                       int      `json:"num_layers"`
	HiddenSize                      int      `json:"hidden_size"`
	FFNHiddenSize                   int      `json:"ffn_hidden_size"`
	NumAttentionHeads               int      `json:"num_attention_heads"`
	NumQueryGroups                  *int     `json:"num_query_groups"`
	KVChannels                      *int     `json:"kv_channels"`
	SeqLength                       int      `json:"seq_length"`
	VocabSize                       *int     `json:"vocab_size"`
	MakeVocabSizeDivisibleBy        int      `json:"make_vocab_size_divisible_by"`
	Swiglu                          bool     `json:"swiglu"`
	Normalization                   string   `json:"normalization"`
	Untie                           bool     `json:"untie_embeddings_and_output_weights"`
	AddBiasLinear                   bool     `json:"add_bias_linear"`
	NumExperts                      *int     `json:"num_experts"`
	MoEFFNHiddenSize                *int     `json:"moe_ffn_hidden_size"`
	MoERouterTopK                   int      `json:"moe_router_topk"`
	MoELayerFreq                    int      `json:"moe_layer_freq"`
	MoESharedExpertIntermediateSize *int     `json:"moe_shared_expert_intermediate_size"`
	MoETokenDispatcherType          *string  `json:"moe_token_dispatcher_type"`
	MoEExpertCapacityFactor         *float64 `json:"moe_expert_capacity_factor"`
	MoEPadExpertInputToCapacity     bool     `json:"moe_pad_expert_input_to_capacity"`
	TP                              int      `json:"tensor_model_parallel_size"`
	PP                              int      `json:"pipeline_model_parallel_size"`
	VPP                             *int     `json:"virtual_pipeline_model_parallel_size"`
	EP                              int      `json:"expert_model_parallel_size"`
	CP                              *int     `json:"context_parallel_size"`
	SequenceParallel                bool     `json:"sequence_parallel"`
	UseDistributedOptimizer         bool     `json:"use_distributed_optimizer"`
	RecomputeGranularity            *string  `json:"recompute_granularity"`
	RecomputeMethod                 *string  `json:"recompute_method"`
	RecomputeNumLayers              *int     `json:"recompute_num_layers"`
	TransformerImpl                 *string  `json:"transformer_impl"`
	AttentionBackend                *string  `json:"attention_backend"`
	MicroBatchSize                  int      `json:"micro_batch_size"`
	GlobalBatchSize                 int      `json:"global_batch_size"`
	WorldSize                       int      `json:"world_size"`
}

// measuredRun is one configuration of a measured results file
// (internal/model/testdata/measured/*.json, testdata/measured/*.json;
// testdata/measured/README.md): the arguments (per module for a MIMO
// run), the stack, Megatron's figure computed on the device by
// theoretical_memory_usage.py, and what each rank's GPU held.
type measuredRun struct {
	Arguments json.RawMessage `json:"arguments"`
	Stack     struct {
		GradReduceInFP32 *bool  `json:"grad_reduce_in_fp32"`
		Schedule         string `json:"schedule"`
	} `json:"stack"`
	Theory struct {
		WeightAndOptimizerBytes float64 `json:"weight_and_optimizer_bytes"`
		ActivationBytes         float64 `json:"activation_bytes"`
		ActivationFunction      string  `json:"activation_function"`
		PaddedVocabSize         int     `json:"padded_vocab_size"`
	} `json:"megatron_theory"`
	Env struct {
		AllocConf string `json:"pytorch_cuda_alloc_conf"`
	} `json:"env"`
	Ranks []struct {
		Module       string  `json:"module"`
		MaxAllocated float64 `json:"max_allocated"`
		MaxReserved  float64 `json:"max_reserved"`
		SMI          struct {
			ProcessUsedMiB float64 `json:"process_used_mib"`
		} `json:"smi_after_last_step"`
	} `json:"ranks"`
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// modules are the run's modules by name ("" for a one-model run).
func (r *measuredRun) modules(t *testing.T) map[string]measuredArgs {
	t.Helper()
	var mimo map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.Arguments, &mimo))
	out := map[string]measuredArgs{}
	if _, ok := mimo["language"]; ok {
		for name, raw := range mimo {
			var a measuredArgs
			require.NoError(t, json.Unmarshal(raw, &a))
			out[name] = a
		}
		return out
	}
	var a measuredArgs
	require.NoError(t, json.Unmarshal(r.Arguments, &a))
	out[""] = a
	return out
}

func (r *measuredRun) inputs(a measuredArgs) (Config, Parallel, Training) {
	bias := a.AddBiasLinear
	c := Config{
		NumLayers: a.NumLayers, HiddenSize: a.HiddenSize, FFNHiddenSize: a.FFNHiddenSize,
		NumAttentionHeads: a.NumAttentionHeads, NumQueryGroups: deref(a.NumQueryGroups),
		KVChannels: deref(a.KVChannels), SeqLength: a.SeqLength, VocabSize: deref(a.VocabSize),
		MakeVocabSizeDivisibleBy: a.MakeVocabSizeDivisibleBy, Swiglu: a.Swiglu,
		Normalization: a.Normalization, UntieEmbeddingsAndOutputWeights: a.Untie,
		AddBiasLinear: &bias, NumExperts: deref(a.NumExperts),
		MoEFFNHiddenSize: deref(a.MoEFFNHiddenSize), MoERouterTopK: a.MoERouterTopK,
		MoELayerFreq: a.MoELayerFreq, MoESharedExpertIntermediateSize: deref(a.MoESharedExpertIntermediateSize),
	}
	p := Parallel{NumRanks: a.WorldSize, TP: a.TP, PP: a.PP, VPP: deref(a.VPP), EP: a.EP, CP: deref(a.CP)}.Resolve()
	tr := Training{
		UseDistributedOptimizer: a.UseDistributedOptimizer,
		SequenceParallel:        a.SequenceParallel && a.TP > 1,
		MicroBatchSize:          a.MicroBatchSize,
		NumMicrobatches:         a.GlobalBatchSize / (a.MicroBatchSize * p.DP),
		// The scripts run Megatron-core's local layer spec (no Transformer
		// Engine) unless the run names another implementation.
		TransformerImpl: ImplLocal,
	}
	if a.RecomputeGranularity != nil {
		tr.RecomputeGranularity = *a.RecomputeGranularity
	}
	if a.RecomputeMethod != nil {
		tr.RecomputeMethod = *a.RecomputeMethod
	}
	if a.RecomputeNumLayers != nil {
		tr.RecomputeNumLayers = *a.RecomputeNumLayers
	}
	if a.TransformerImpl != nil {
		tr.TransformerImpl = *a.TransformerImpl
	}
	if a.AttentionBackend != nil {
		tr.AttentionBackend = *a.AttentionBackend
	}
	if d := a.MoETokenDispatcherType; d != nil && *d != "allgather" {
		tr.MoETokenDispatcherType = *d
	}
	if f := a.MoEExpertCapacityFactor; f != nil {
		tr.MoEExpertCapacityFactor = *f
	}
	tr.MoEPadExpertInputToCapacity = a.MoEPadExpertInputToCapacity
	if f := r.Stack.GradReduceInFP32; f != nil {
		tr.GradReduceInBF16 = !*f
	}
	tr.ExpandableSegments = slices.Contains(strings.Split(r.Env.AllocConf, ","), "expandable_segments:True")
	return c, p, tr
}

// colocated reports whether every rank of a MIMO run holds all modules.
func (r *measuredRun) colocated() bool {
	return len(r.Ranks) > 0 && strings.Contains(r.Ranks[0].Module, "+")
}

// rankPeak is the busiest rank's figures, among the ranks of module (""
// for every rank).
func (r *measuredRun) rankPeak(module string) (allocated, reserved, smi float64) {
	for _, k := range r.Ranks {
		if module != "" && k.Module != module {
			continue
		}
		allocated, reserved = max(allocated, k.MaxAllocated), max(reserved, k.MaxReserved)
		smi = max(smi, k.SMI.ProcessUsedMiB*(1<<20))
	}
	return allocated, reserved, smi
}

// loadMeasured reads every measured results file, by file name (the GPU
// and run, such as h100-x1 or h200-x2).
func loadMeasured(t *testing.T) map[string]map[string]measuredRun {
	t.Helper()
	var files []string
	for _, g := range []string{"testdata/measured/*.json", "../../testdata/measured/*.json"} {
		f, err := filepath.Glob(g)
		require.NoError(t, err)
		files = append(files, f...)
	}
	require.NotEmpty(t, files)
	out := map[string]map[string]measuredRun{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var doc struct {
			Configs map[string]measuredRun `json:"configs"`
		}
		require.NoError(t, json.Unmarshal(data, &doc), f)
		runs := map[string]measuredRun{}
		for name, r := range doc.Configs {
			if len(r.Ranks) > 0 { // megatron-theory.json holds figures, not runs
				runs[name] = r
			}
		}
		if len(runs) == 0 {
			continue
		}
		doc.Configs = runs
		key := strings.TrimSuffix(filepath.Base(f), ".json")
		if _, dup := out[key]; dup {
			key += " (testdata/measured)" // a later run on the same kind of machine
		}
		out[key] = doc.Configs
	}
	return out
}

// The Megatron figure mimoplan computes is the one Megatron's own file gave
// on the device for the same arguments.
func TestMeasuredRunsMegatronFigure(t *testing.T) {
	for gpu, runs := range loadMeasured(t) {
		for name, r := range runs {
			mods := r.modules(t)
			a, ok := mods[""]
			if !ok {
				a = mods["language"] // a MIMO run's figure is its language model's
			}
			c, p, tr := r.inputs(a)
			m := Compute(c, p, tr).Megatron
			assert.Equal(t, r.Theory.PaddedVocabSize, m.PaddedVocabSize, "%s/%s", gpu, name)
			assert.Equal(t, r.Theory.ActivationFunction, m.ActivationFormula, "%s/%s", gpu, name)
			assert.LessOrEqual(t, relErr(m.WeightAndOptimizerBytes, r.Theory.WeightAndOptimizerBytes), exact, "%s/%s weights", gpu, name)
			assert.LessOrEqual(t, relErr(m.ActivationBytes, r.Theory.ActivationBytes), exact, "%s/%s activations", gpu, name)
		}
	}
}

var updateDoc = flag.Bool("update-doc", false, "rewrite docs/estimate.md's measured agreement table")

// agreement is one measured configuration against mimoplan's Total.
type agreement struct {
	gpu, name          string
	megatron, total    float64 // bytes
	reserved, smi      float64 // bytes, the busiest rank
	ratio              float64 // total / smi
	within, underShort bool
}

func measuredAgreement(t *testing.T) []agreement {
	var out []agreement
	add := func(gpu, label string, e Estimate, total float64, reserved, smi float64) {
		require.Positive(t, smi, "%s/%s", gpu, label)
		ratio := total / smi
		out = append(out, agreement{gpu: gpu, name: label, megatron: e.Megatron.TotalBytes(), total: total,
			reserved: reserved, smi: smi, ratio: ratio, within: ratio >= 0.9 && ratio <= 1.1, underShort: ratio < 0.9})
	}
	for gpu, runs := range loadMeasured(t) {
		for name, r := range runs {
			mods := r.modules(t)
			if r.colocated() {
				// Every rank runs every module: their totals add up, with
				// one CUDA context (as validate.CheckMemory adds them).
				total := -float64(len(mods)-1) * CUDAContextBytes
				var lang Estimate
				for mod, a := range mods {
					c, p, tr := r.inputs(a)
					e := Total(c, p, tr)
					total += e.TotalBytes()
					if mod == "language" {
						lang = e
					}
				}
				_, reserved, smi := r.rankPeak("")
				add(gpu, name, lang, total, reserved, smi)
				continue
			}
			for mod, a := range mods {
				c, p, tr := r.inputs(a)
				label := name
				if mod != "" {
					// A MIMO module on its own GPU: one bridge to the other.
					tr.Communicators = 1
					label = name + "/" + mod
					if mod != "language" && strings.HasPrefix(r.Stack.Schedule, "encoder: all forwards then all backwards") {
						tr.MicrobatchesInFlight = tr.NumMicrobatches
					}
				}
				e := Total(c, p, tr)
				_, reserved, smi := r.rankPeak(mod)
				add(gpu, label, e, e.TotalBytes(), reserved, smi)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].name != out[j].name {
			return out[i].name < out[j].name
		}
		return out[i].gpu < out[j].gpu
	})
	return out
}

func agreementTable(rows []agreement) string {
	var b strings.Builder
	b.WriteString("| configuration | GPU | Megatron (MiB) | mimoplan total (MiB) | nvidia-smi (MiB) | mimoplan / nvidia-smi | within 10% |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | --- |\n")
	within := 0
	for _, r := range rows {
		mark := "yes"
		if !r.within {
			mark = "**no**"
		} else {
			within++
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f | %.0f | %.3f | %s |\n", r.name, r.gpu, r.megatron/(1<<20), r.total/(1<<20), r.smi/(1<<20), r.ratio, mark)
	}
	var under []string
	for _, r := range rows {
		if r.underShort {
			under = append(under, r.gpu+"/"+r.name)
		}
	}
	if len(under) == 0 {
		under = []string{"none"}
	}
	fmt.Fprintf(&b, "\n%d of %d measured runs within 10%% of nvidia-smi; under by more than 10%%: %s.\n", within, len(rows), strings.Join(under, ", "))
	return b.String()
}

// knownUnder are the measured runs mimoplan's total is short of by more
// than 10%, each with why (docs/estimate.md, "Measured on GPUs"); the
// test fails when one of them is no longer short, so the list only
// shrinks.
var knownUnder = map[string]string{
	"h200-x2-expandable/step8-dense-pp2-vpp12": "the same configuration with expandable segments: the allocator still reserved 10.7% above the last stage's peak (8.8% on the first), where the estimate's slack with expandable segments is the measured mean, 2.27%",
	"h200-x2-expandable/moe-ep2":               "PyTorch's own peak allocation, 6,501 MiB, is about 1.1 GiB above what the estimate allocates for this small MoE model at ep 2: what stays between steps (weights, gradients, optimizer state) 345 MiB above Megatron's figure, and the forward and backward peak above it moves with the routing of random tokens, 2,572 MiB in the second step and 2,878 at most over the 13, against the estimate's 2,108 (moe-ep1 is 0.9 GiB short too, within 10% of the total); with the default allocator the MoE fragmentation term (25% of the activations) covered it (0.904), with expandable segments there is no such term and the reserve above the peak is 3.6%",
	"h200-x2/step8-dense-pp2-vpp12":            "pp 2 at vpp 12 (one layer a model chunk, 4 micro-batches of 8): the last stage's caching allocator reserved 12.7% above its peak allocation (9.7% at vpp 4, 3.1% without interleaving), where the estimate's slack is the measured mean, 3.75%, and the last stage, with the output layer's fp32 logits of a micro-batch in flight, allocated 1.3 GiB more than the first, whose figure the estimate is",
}

// The targets on every measured run (new fixtures are held to them
// as they land): at least 90% within 10% of nvidia-smi's used memory, none
// under it by more than 10% but those knownUnder names; docs/estimate.md
// shows the figures.
func TestMeasuredAgreement(t *testing.T) {
	rows := measuredAgreement(t)
	within := 0
	for _, r := range rows {
		if why, ok := knownUnder[r.gpu+"/"+r.name]; ok {
			assert.True(t, r.underShort, "%s/%s is short by more than 10%%: %s", r.gpu, r.name, why)
			continue
		}
		assert.False(t, r.underShort, "%s/%s: mimoplan %.0f MiB is %.1f%% under nvidia-smi's %.0f MiB", r.gpu, r.name, r.total/(1<<20), 100*(1-r.ratio), r.smi/(1<<20))
		if r.within {
			within++
		}
	}
	assert.GreaterOrEqual(t, float64(within), 0.9*float64(len(rows)), "within 10%%: %d of %d", within, len(rows))
	table := agreementTable(rows)
	t.Log("\n" + table)
	const docPath = "../../docs/estimate.md"
	doc, err := os.ReadFile(docPath)
	require.NoError(t, err)
	begin, end := "<!-- measured:begin -->\n", "<!-- measured:end -->"
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	require.True(t, i >= 0 && j > i, "docs/estimate.md has the measured table markers")
	if *updateDoc {
		doc = []byte(string(doc[:i+len(begin)]) + table + string(doc[j:]))
		require.NoError(t, os.WriteFile(docPath, doc, 0o644))
		return
	}
	assert.Equal(t, table, string(doc[i+len(begin):j]), "docs/estimate.md's measured table is current (go test ./internal/model -run TestMeasuredAgreement -update-doc)")
}
