package launch

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTopologyTraining: the topology a core or megatron-bridge program
// reads carries the training settings that differ from Megatron's
// defaults, typed, and nothing for a layout without any.
func TestTopologyTraining(t *testing.T) {
	for _, c := range []struct {
		training string
		want     map[string]any
	}{
		{"", nil},
		{"training: {use_distributed_optimizer: false}\n", nil},
		{"training: {use_distributed_optimizer: true, recompute_granularity: full, recompute_num_layers: 2, grad_reduce_in_fp32: false}\n",
			map[string]any{"use_distributed_optimizer": true, "recompute_granularity": "full", "recompute_num_layers": float64(2), "grad_reduce_in_fp32": false}},
	} {
		src := strings.Replace(threeModule, "modules:\n", c.training+"modules:\n", 1)
		var got map[string]any
		require.NoError(t, json.Unmarshal(Topology(check(t, src)), &got))
		if c.want == nil {
			assert.NotContains(t, got, "training", c.training)
			continue
		}
		assert.Equal(t, c.want, got["training"], c.training)
	}
}

// TestBridgeTraining: --format bridge writes every training key as its
// Bridge config field, at the layout's value (Megatron's default when
// not given); sequence parallelism for the language model alone.
func TestBridgeTraining(t *testing.T) {
	src := "version: 1\ntarget: megatron-bridge\nworld_size: 8\ntraining: {use_distributed_optimizer: true, sequence_parallel: true, grad_reduce_in_fp32: false, attention_backend: flash, recompute_num_layers: 2}\nmodules:\n- {name: language, num_ranks: 4, tp: 4}\n- {name: vision, num_ranks: 4, tp: 4, rank_offset: 4}\n"
	p, d, err := Build(check(t, src), Options{Program: []string{"llava.py"}, MasterPort: DefaultMasterPort})
	require.NoError(t, err)
	require.NotNil(t, p, "%v", d)
	var b strings.Builder
	require.NoError(t, WriteBridge(&b, p))
	out := b.String()
	for _, want := range []string{
		"DDP_CONFIG = {\n    \"use_distributed_optimizer\": True,\n    \"overlap_grad_reduce\": False,\n    \"overlap_param_gather\": False,\n    \"grad_reduce_in_fp32\": False,\n    \"fp8_param_gather\": False,\n}\n",
		"OPTIMIZER_CONFIG = {\n    \"use_distributed_optimizer\": True,\n    \"use_precision_aware_optimizer\": False,\n    \"main_grads_dtype\": torch.float32,\n    \"main_params_dtype\": torch.float32,\n    \"exp_avg_dtype\": torch.float32,\n    \"exp_avg_sq_dtype\": torch.float32,\n}\n",
		"    \"language\": {\n        \"sequence_parallel\": True,\n        \"recompute_granularity\": None,\n        \"recompute_method\": None,\n        \"recompute_num_layers\": 2,\n",
		"    \"vision\": {\n        \"sequence_parallel\": False,\n",
		"        \"attention_backend\": AttnBackend.flash,\n        \"fp8\": None,\n",
	} {
		assert.Contains(t, out, want)
	}
	// Without a training block, nothing of it.
	p, _, err = Build(check(t, strings.Replace(src, "training: {use_distributed_optimizer: true, sequence_parallel: true, grad_reduce_in_fp32: false, attention_backend: flash, recompute_num_layers: 2}\n", "", 1)),
		Options{Program: []string{"llava.py"}, MasterPort: DefaultMasterPort})
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, WriteBridge(&b, p))
	assert.NotContains(t, b.String(), "DDP_CONFIG")
}

// bridgeText is the Bridge plan of a megatron-bridge layout with training
// block training, the language module language and a vision encoder on the
// other 4 of 8 ranks.
func bridgeText(t *testing.T, training, language string) string {
	t.Helper()
	src := "version: 1\ntarget: megatron-bridge\nworld_size: 8\ntraining: " + training + "\nmodules:\n- " + language + "\n- {name: vision, num_ranks: 4, rank_offset: 4}\n"
	p, d, err := Build(check(t, src), Options{Program: []string{"llava.py"}, MasterPort: DefaultMasterPort})
	require.NoError(t, err)
	require.NotNil(t, p, "%v", d)
	var b strings.Builder
	require.NoError(t, WriteBridge(&b, p))
	return b.String()
}

// TestBridgeOptimizerDtypes: the precision-aware optimizer's keys go to
// OptimizerConfig, each dtype as the torch dtype Megatron-LM maps its
// argument to (fp8 as torch.uint8).
func TestBridgeOptimizerDtypes(t *testing.T) {
	for _, tc := range []struct{ training, want string }{
		{"{use_distributed_optimizer: true, use_precision_aware_optimizer: true, exp_avg_dtype: bf16, exp_avg_sq_dtype: bf16}",
			"    \"use_precision_aware_optimizer\": True,\n    \"main_grads_dtype\": torch.float32,\n    \"main_params_dtype\": torch.float32,\n    \"exp_avg_dtype\": torch.bfloat16,\n    \"exp_avg_sq_dtype\": torch.bfloat16,\n}\n"},
		{"{use_distributed_optimizer: true, use_precision_aware_optimizer: true, grad_reduce_in_fp32: false, main_grads_dtype: bf16, main_params_dtype: fp16, exp_avg_dtype: fp8, exp_avg_sq_dtype: fp16}",
			"    \"use_precision_aware_optimizer\": True,\n    \"main_grads_dtype\": torch.bfloat16,\n    \"main_params_dtype\": torch.float16,\n    \"exp_avg_dtype\": torch.uint8,\n    \"exp_avg_sq_dtype\": torch.float16,\n}\n"},
	} {
		out := bridgeText(t, tc.training, "{name: language, num_ranks: 4}")
		assert.Contains(t, out, "OPTIMIZER_CONFIG = {\n    \"use_distributed_optimizer\": True,\n"+tc.want, tc.training)
		assert.Contains(t, out, "import torch\n", tc.training)
	}
}

// TestBridgeOverlapP2PComm: each module's TransformerConfig gets the
// overlap_p2p_comm Megatron-LM settles: false without a virtual pipeline
// (the only pipeline Bridge's MIMO training runs, whose non-interleaved
// schedule raises on true), whatever the layout states.
func TestBridgeOverlapP2PComm(t *testing.T) {
	for _, tc := range []struct{ name, training, language string }{
		{"the default at pp 2", "{use_distributed_optimizer: true}", "{name: language, num_ranks: 4, pp: 2}"},
		{"stated true at pp 2", "{overlap_p2p_comm: true}", "{name: language, num_ranks: 4, pp: 2, vpp: 1}"},
		{"stated false at pp 1", "{overlap_p2p_comm: false}", "{name: language, num_ranks: 4}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := bridgeText(t, tc.training, tc.language)
			assert.Equal(t, 2, strings.Count(out, "        \"fp8\": None,\n        \"overlap_p2p_comm\": False,\n"), out)
		})
	}
}

// TestBridgeDeferEmbeddingWgrad: the output layer's deferral goes to the
// language model's TransformerConfig alone (an encoder has no output
// layer), gradient_accumulation_fusion and wgrad_deferral_limit to every
// module, Megatron-LM's fusion (true) where the layout is silent, since
// TransformerConfig's own default is False.
func TestBridgeDeferEmbeddingWgrad(t *testing.T) {
	for _, tc := range []struct{ training, language, vision string }{
		{"{use_distributed_optimizer: true}",
			"        \"gradient_accumulation_fusion\": True,\n        \"defer_embedding_wgrad_compute\": False,\n        \"wgrad_deferral_limit\": 0,\n",
			"        \"gradient_accumulation_fusion\": True,\n        \"defer_embedding_wgrad_compute\": False,\n        \"wgrad_deferral_limit\": 0,\n"},
		{"{defer_embedding_wgrad_compute: true, wgrad_deferral_limit: 22}",
			"        \"gradient_accumulation_fusion\": True,\n        \"defer_embedding_wgrad_compute\": True,\n        \"wgrad_deferral_limit\": 22,\n",
			"        \"gradient_accumulation_fusion\": True,\n        \"defer_embedding_wgrad_compute\": False,\n        \"wgrad_deferral_limit\": 22,\n"},
		{"{gradient_accumulation_fusion: false}",
			"        \"gradient_accumulation_fusion\": False,\n        \"defer_embedding_wgrad_compute\": False,\n",
			"        \"gradient_accumulation_fusion\": False,\n        \"defer_embedding_wgrad_compute\": False,\n"},
	} {
		assertModuleConfigs(t, bridgeText(t, tc.training, "{name: language, num_ranks: 4, pp: 2}"), tc.training, tc.language, tc.vision)
	}
}

// TestBridgeCrossEntropyFusion: the loss's fusion goes to the language
// model's TransformerConfig alone (an encoder computes no loss), written
// false where the layout is silent, since Bridge's GPT provider turns it
// on by default (gpt_provider.py:205 at 067f987); so does its
// implementation, an encoder's at Megatron's default (native).
func TestBridgeCrossEntropyFusion(t *testing.T) {
	for _, tc := range []struct{ training, language, vision string }{
		{"{use_distributed_optimizer: true}",
			"        \"cross_entropy_loss_fusion\": False,\n        \"cross_entropy_fusion_impl\": \"native\",\n",
			"        \"cross_entropy_loss_fusion\": False,\n        \"cross_entropy_fusion_impl\": \"native\",\n"},
		{"{cross_entropy_loss_fusion: true}",
			"        \"cross_entropy_loss_fusion\": True,\n        \"cross_entropy_fusion_impl\": \"native\",\n",
			"        \"cross_entropy_loss_fusion\": False,\n        \"cross_entropy_fusion_impl\": \"native\",\n"},
		{"{cross_entropy_fusion_impl: te}",
			"        \"cross_entropy_loss_fusion\": False,\n        \"cross_entropy_fusion_impl\": \"te\",\n",
			"        \"cross_entropy_loss_fusion\": False,\n        \"cross_entropy_fusion_impl\": \"native\",\n"},
	} {
		assertModuleConfigs(t, bridgeText(t, tc.training, "{name: language, num_ranks: 4}"), tc.training, tc.language, tc.vision)
	}
}

// TestBridgeTPCommOverlap: tp_comm_overlap goes to the language model's
// TransformerConfig alone, with the sequence parallelism it needs: an
// encoder runs without either, as the estimate costs it.
func TestBridgeTPCommOverlap(t *testing.T) {
	for _, tc := range []struct{ training, language, vision string }{
		{"{sequence_parallel: true, tp_comm_overlap: true}",
			"        \"sequence_parallel\": True,\n", "        \"sequence_parallel\": False,\n"},
		{"{sequence_parallel: true, tp_comm_overlap: true}",
			"        \"tp_comm_overlap\": True,\n", "        \"tp_comm_overlap\": False,\n"},
		{"{sequence_parallel: true}",
			"        \"tp_comm_overlap\": False,\n", "        \"tp_comm_overlap\": False,\n"},
	} {
		assertModuleConfigs(t, bridgeText(t, tc.training, "{name: language, num_ranks: 4, tp: 2}"), tc.training, tc.language, tc.vision)
	}
}

// assertModuleConfigs checks that Bridge's config text out holds language
// in the language model's TransformerConfig and vision in the encoder's
// (written after it).
func assertModuleConfigs(t *testing.T, out, training, language, vision string) {
	t.Helper()
	lang, vis := strings.Index(out, "    \"language\": {\n"), strings.Index(out, "    \"vision\": {\n")
	require.True(t, lang > 0 && vis > lang, out)
	assert.Contains(t, out[lang:vis], language, training)
	assert.Contains(t, out[vis:], vision, training)
}
