package layout_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
)

func parseTraining(t *testing.T, block string) (*layout.Layout, *diag.List) {
	t.Helper()
	return layout.Parse("t.yaml", []byte("version: 1\nworld_size: 8\ntraining:\n"+block+"modules:\n  - {name: language, num_ranks: 8}\n"))
}

// Every value of every key reads back as written, and a stated default is
// the same layout as an absent key.
func TestTrainingKeysReadBack(t *testing.T) {
	for _, k := range layout.TrainingKeys() {
		values := k.Values
		switch k.Kind {
		case "bool":
			values = []string{"false", "true"}
		case "int":
			values = []string{"1", "7"}
			if k.Default == "0" { // wgrad_deferral_limit: 0 is every micro-batch
				values = []string{"0", "22", "-1"}
			}
		case "float":
			values = []string{"1", "1.25", "0.5"}
		case "list":
			values = []string{"[core_attn]", "[mla_up_proj, mlp]"}
		}
		for _, v := range values {
			l, d := parseTraining(t, "  "+k.Name+": "+v+"\n")
			require.Empty(t, d.Items, "%s: %s", k.Name, v)
			require.NotNil(t, l.Training)
			assert.Equal(t, v, k.Value(l.Training), k.Name)
			stated := l.Training.Stated()
			if v == k.Default {
				assert.Empty(t, stated, "%s: %s is the default", k.Name, v)
				assert.Equal(t, layout.Training{}, *l.Training)
			} else {
				assert.Equal(t, [][2]string{{k.Name, v}}, stated)
			}
			// The position is the value's, where a diagnostic about it points.
			assert.Equal(t, diag.Pos{Line: 4, Column: len(k.Name) + 5}, l.Pos("training."+k.Name), k.Name)
		}
	}
}

func TestTrainingKeyErrors(t *testing.T) {
	for _, c := range []struct{ block, contains string }{
		{"  recompute_granularity: selectiv\n", "did you mean selective?"},
		{"  transformer_impl: transformer-engine\n", "did you mean transformer_engine?"},
		{"  attention_backend: flsh\n", "did you mean flash?"},
		{"  moe_token_dispatcher_type: all2all\n", "must be allgather, alltoall or flex"},
		{"  fp8: e5m2\n", "must be none, e4m3 or hybrid"},
		{"  fp8: [e4m3]\n", "must be none, e4m3 or hybrid"},
		{"  overlap_grad_reduce: 1\n", "must be true or false"},
		{"  recompute_num_layers: 0\n", "at least 1"},
		{"  grad_reduce_in_fp23: false\n", `did you mean "grad_reduce_in_fp32"`},
		// Megatron-LM's choices (arguments.py:3671-3684): no bf16 main
		// parameters, no fp16 main gradients.
		{"  main_params_dtype: bf16\n", `must be fp32 or fp16, got the string "bf16"`},
		{"  main_grads_dtype: fp16\n", `must be fp32 or bf16, got the string "fp16"`},
		{"  exp_avg_dtype: fp4\n", "must be fp32, fp16, bf16 or fp8"},
		{"  exp_avg_sq_dtype: bf1\n", "fp32 (the default), fp16, bf16, fp8"},
		{"  use_precision_aware_optimizer: yes please\n", "must be true or false"},
		{"  gradient_accumulation_fusion: 0\n", "must be true or false"},
		{"  wgrad_deferral_limit: all\n", "a number of micro-batches (0: all)"},
		{"  wgrad_deferral_limit: 2.5\n", "a number of micro-batches (0: all)"},
		{"  cross_entropy_fusion_impl: transformer_engine\n", "must be native or te"},
		{"  cross_entropy_fusion_impl: tee\n", "did you mean te?"},
		{"  cross_entropy_loss_fusion: native\n", "must be true or false"},
		// A capacity factor is a plain decimal above 0; Megatron takes a
		// negative one as none, which a layout says by leaving it out.
		{"  moe_expert_capacity_factor: -1\n", "must be above 0"},
		{"  moe_expert_capacity_factor: 0\n", "leave it out for dropless MoE"},
		{"  moe_expert_capacity_factor: \"1.5\"\n", "remove the quotes"},
		{"  moe_expert_capacity_factor: .inf\n", "decimal number"},
		{"  moe_expert_capacity_factor: 0x10\n", "decimal number"},
		{"  moe_expert_capacity_factor: 1e30\n", "at most"},
		{"  moe_expert_capacity_factor: 1e-400\n", "must be above 0"},
		{"  moe_expert_capacity_factor: none\n", "must be a number"},
		{"  moe_pad_expert_input_to_capacity: 1\n", "must be true or false"},
		{"  recompute_modules: core_attn\n", "must be a list of core_attn"},
		{"  recompute_modules: [core_atn]\n", "did you mean core_attn?"},
		{"  recompute_modules: [gdn_norm_out]\n", "recompute_modules[0] must be core_attn"},
		{"  recompute_modules: []\n", "at least one"},
	} {
		_, d := parseTraining(t, c.block)
		require.Len(t, d.Items, 1, c.block)
		it := d.Items[0]
		assert.Equal(t, diag.Error, it.Severity, c.block)
		assert.Contains(t, []string{string(diag.RuleInvalidValue), string(diag.RuleUnknownField)}, it.Rule, c.block)
		assert.Equal(t, 4, it.Line, c.block)
		assert.Contains(t, it.Message+" "+it.Hint, c.contains, c.block)
	}
	// Independent mistakes are all reported.
	_, d := parseTraining(t, "  fp8: e5m2\n  tp_comm_overlap: maybe\n  recompute_method: blok\n")
	assert.Len(t, d.Items, 3)
}

// A random training block written from Stated reads back to the same
// Training, and ModelTraining hands every setting to the model.
func TestTrainingStatedRoundTrip(t *testing.T) {
	keys := layout.TrainingKeys()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		var want layout.Training
		for _, k := range keys {
			switch k.Kind {
			case "bool":
				require.True(t, k.Set(&want, []string{"true", "false"}[rng.IntN(2)]))
			case "enum":
				require.True(t, k.Set(&want, k.Values[rng.IntN(len(k.Values))]))
			case "int":
				if rng.IntN(2) == 0 {
					require.True(t, k.Set(&want, "3"))
				}
			case "float":
				if rng.IntN(2) == 0 {
					require.True(t, k.Set(&want, "1.5"))
				}
			case "list":
				require.True(t, k.Set(&want, []string{"[core_attn]", "[moe, layernorm]"}[rng.IntN(2)]))
			}
		}
		var b strings.Builder
		for _, kv := range want.Stated() {
			b.WriteString("  " + kv[0] + ": " + kv[1] + "\n")
		}
		if b.Len() == 0 {
			continue
		}
		l, d := parseTraining(t, b.String())
		require.Empty(t, d.Items, b.String())
		assert.Equal(t, want, *l.Training)

		mt := l.ModelTraining(&l.Modules[0], 8)
		assert.Equal(t, want.RecomputeMethod, mt.RecomputeMethod)
		assert.Equal(t, want.GradReduceInBF16, mt.GradReduceInBF16)
		assert.Equal(t, want.TransformerImpl, mt.TransformerImpl)
		assert.Equal(t, want.AttentionBackend, mt.AttentionBackend)
		assert.Equal(t, want.FP8, mt.FP8)
		assert.Equal(t, want.MoETokenDispatcherType, mt.MoETokenDispatcherType)
		assert.Equal(t, want.OverlapGradReduce, mt.OverlapGradReduce)
		assert.Equal(t, want.OverlapParamGather, mt.OverlapParamGather)
		assert.Equal(t, want.TPCommOverlap, mt.TPCommOverlap)
		assert.Equal(t, want.OverlapMoEExpertParallelComm, mt.OverlapMoEExpertParallelComm)
		assert.Equal(t, want.RecomputeNumLayers, mt.RecomputeNumLayers)
		assert.Equal(t, want.NoGradientAccumulationFusion, mt.NoGradientAccumulationFusion)
		assert.Equal(t, want.DeferEmbeddingWgradCompute, mt.DeferEmbeddingWgradCompute)
		assert.Equal(t, want.WgradDeferralLimit, mt.WgradDeferralLimit)
		assert.Equal(t, want.CrossEntropyLossFusion, mt.CrossEntropyLossFusion)
		assert.Equal(t, want.CrossEntropyFusionImpl, mt.CrossEntropyFusionImpl)
	}
}

func TestTrainingKeySetRefuses(t *testing.T) {
	for _, k := range layout.TrainingKeys() {
		var tr layout.Training
		bad := []string{"", "yes", "-1", "0", "01", "Selective"}
		if k.Default == "0" {
			// wgrad_deferral_limit takes 0, and a negative limit, which
			// Megatron refuses only while deferring.
			bad = []string{"", "yes", "01", "-01", "+1", "1.0"}
		}
		for _, b := range bad {
			if k.Set(&tr, b) {
				t.Errorf("%s accepted %q", k.Name, b)
			}
		}
		assert.Equal(t, layout.Training{}, tr, k.Name)
	}
	// Encoders run without sequence parallelism, tp_comm_overlap, an
	// output layer whose weight gradient they could defer or a loss.
	l, d := layout.Parse("t.yaml", []byte("version: 1\nworld_size: 8\ntraining: {sequence_parallel: true, tp_comm_overlap: true, defer_embedding_wgrad_compute: true, cross_entropy_loss_fusion: true, cross_entropy_fusion_impl: te}\nmodules:\n  - {name: vision, num_ranks: 4}\n  - {name: language, num_ranks: 4}\n"))
	require.Empty(t, d.Items)
	assert.Equal(t, model.Training{MicroBatchSize: 1}, l.ModelTraining(&l.Modules[0], 4))
}

// TestOverlapP2PComm: the overlap a module runs with is the training
// block's under a virtual pipeline (vpp, or a layout of more stages than
// pp) and off without one, as Megatron-LM's validate_args settles it.
func TestOverlapP2PComm(t *testing.T) {
	for _, tc := range []struct {
		name, training, module string
		want                   bool
	}{
		{"vpp 2, the default", "", "pp: 2, vpp: 2", true},
		{"vpp 2, stated true", "training: {overlap_p2p_comm: true}\n", "pp: 2, vpp: 2", true},
		{"vpp 2, stated false", "training: {overlap_p2p_comm: false}\n", "pp: 4, vpp: 2", false},
		{"vpp 1", "", "pp: 2, vpp: 1", false},
		{"no pipeline", "training: {overlap_p2p_comm: true}\n", "pp: 1", false},
		{"a layout of 4 stages at pp 2", "", "pp: 2, pipeline_model_parallel_layout: \"Et|t|t|tL\"", true},
		{"a layout of 2 stages at pp 2", "", "pp: 2, pipeline_model_parallel_layout: \"Ett|ttL\"", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, d := layout.Parse("t.yaml", []byte("version: 1\nworld_size: 8\n"+tc.training+"modules:\n  - {name: language, num_ranks: 8, "+tc.module+"}\n"))
			require.Empty(t, d.Items)
			m := &l.Modules[0]
			assert.Equal(t, tc.want, l.OverlapP2PComm(m, m.PP))
		})
	}
}

// grad_reduce_in_fp32 defaults to what Megatron-LM runs beside the main
// gradients' dtype (arguments.py:1215-1216 at d98e8a6): fp32 reduction
// with fp32 main gradients, bf16 with bf16 ones; a stated value stands.
func TestGradReduceFollowsMainGrads(t *testing.T) {
	for _, tc := range []struct {
		block   string
		inBF16  bool
		stated  []string // Stated(): what a layout writer keeps
		spelled []string // Spelled(): what a launch plan says
	}{
		{"  use_precision_aware_optimizer: true\n", false,
			[]string{"use_precision_aware_optimizer"}, []string{"use_precision_aware_optimizer"}},
		{"  main_grads_dtype: bf16\n", true,
			[]string{"main_grads_dtype"}, []string{"grad_reduce_in_fp32", "main_grads_dtype"}},
		{"  main_grads_dtype: bf16\n  grad_reduce_in_fp32: false\n", true,
			[]string{"main_grads_dtype"}, []string{"grad_reduce_in_fp32", "main_grads_dtype"}},
		{"  main_grads_dtype: bf16\n  grad_reduce_in_fp32: true\n", false,
			[]string{"grad_reduce_in_fp32", "main_grads_dtype"}, []string{"main_grads_dtype"}},
		{"  grad_reduce_in_fp32: false\n", true,
			[]string{"grad_reduce_in_fp32"}, []string{"grad_reduce_in_fp32"}},
	} {
		l, d := parseTraining(t, tc.block)
		require.Empty(t, d.Items, tc.block)
		assert.Equal(t, tc.inBF16, l.Training.GradReduceInBF16, tc.block)
		keys := func(kv [][2]string) []string {
			var out []string
			for _, x := range kv {
				out = append(out, x[0])
			}
			return out
		}
		assert.Equal(t, tc.stated, keys(l.Training.Stated()), tc.block)
		assert.Equal(t, tc.spelled, keys(l.Training.Spelled()), tc.block)
	}
}
