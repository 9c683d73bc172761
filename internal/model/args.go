package model

// Args is a model on its sizes in Megatron-LM's argument destinations,
// resolved as Megatron resolves them: what Megatron's memory report and
// FLOPs count read. scripts/gen-model-fixtures.py --layouts runs Megatron's
// own functions on it.
type Args struct {
	Model    map[string]any `json:"model"`
	Parallel map[string]any `json:"parallel"`
	Training map[string]any `json:"training"`
}

// MegatronArgs returns the arguments Compute's Megatron figures stand for.
func MegatronArgs(cfg Config, par Parallel, tr Training) Args {
	c := cfg.Resolve()
	p := par.Resolve()
	m := map[string]any{
		"num_layers": c.NumLayers, "hidden_size": c.HiddenSize, "ffn_hidden_size": c.FFNHiddenSize,
		"num_attention_heads": c.NumAttentionHeads, "kv_channels": c.KVChannels, "seq_length": c.SeqLength,
		"vocab_size": c.VocabSize, "make_vocab_size_divisible_by": c.MakeVocabSizeDivisibleBy,
		"swiglu": c.Swiglu, "normalization": c.Normalization,
		"untie_embeddings_and_output_weights": c.UntieEmbeddingsAndOutputWeights,
		"add_bias_linear":                     *c.AddBiasLinear, "attention_output_gate": c.AttentionOutputGate,
		"multi_latent_attention": c.MultiLatentAttention,
	}
	if c.NumQueryGroups > 0 {
		m["num_query_groups"] = c.NumQueryGroups
	}
	if c.NumExperts > 0 {
		m["num_experts"] = c.NumExperts
		m["moe_ffn_hidden_size"] = c.MoEFFNHiddenSize
		m["moe_router_topk"] = c.MoERouterTopK
		m["moe_shared_expert_gate"] = c.MoESharedExpertGate
		if len(c.MoELayerPattern) > 0 {
			m["moe_layer_freq"] = c.MoELayerPattern
		} else {
			m["moe_layer_freq"] = c.MoELayerFreq
		}
		if c.MoESharedExpertIntermediateSize > 0 {
			m["moe_shared_expert_intermediate_size"] = c.MoESharedExpertIntermediateSize
		}
		if c.MoELatentSize > 0 {
			m["moe_latent_size"] = c.MoELatentSize
		}
	}
	if c.MTPNumLayers > 0 {
		m["mtp_num_layers"] = c.MTPNumLayers
	}
	if c.MultiLatentAttention {
		m["kv_lora_rank"], m["qk_head_dim"], m["qk_pos_emb_head_dim"], m["v_head_dim"] = c.KVLoRARank, c.QKHeadDim, c.QKPosEmbHeadDim, c.VHeadDim
		if c.QLoRARank > 0 {
			m["q_lora_rank"] = c.QLoRARank
		}
	}
	pa := map[string]any{
		"world_size": p.NumRanks, "tensor_model_parallel_size": p.TP, "pipeline_model_parallel_size": p.PP,
		"data_parallel_size": p.DP, "expert_model_parallel_size": p.EP, "expert_tensor_parallel_size": p.ExptTP,
	}
	if p.VPP > 0 {
		pa["virtual_pipeline_model_parallel_size"] = p.VPP
	}
	mbs := tr.MicroBatchSize
	if mbs == 0 {
		mbs = 1
	}
	t := map[string]any{
		"use_distributed_optimizer": tr.UseDistributedOptimizer, "sequence_parallel": tr.SequenceParallel,
		"micro_batch_size": mbs,
	}
	if tr.RecomputeGranularity != "" {
		t["recompute_granularity"] = tr.RecomputeGranularity
	}
	if tr.NumMicrobatches > 0 {
		t["num_microbatches"] = tr.NumMicrobatches
	}
	return Args{Model: m, Parallel: pa, Training: t}
}
