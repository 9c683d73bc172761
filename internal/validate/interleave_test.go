package validate_test

import "testing"

func interleaved(line, column int, module string) at {
	return at{"interleaved-microbatches-not-divisible", line, column, module}
}

// TestInterleavedMicrobatchesRule: target core refuses a virtual pipeline
// whose step's micro-batches (global batch / (micro_batch_size x the
// language lanes)) are not a multiple of pp; the MIMO runtimes, which run
// the non-interleaved schedule, do not.
func TestInterleavedMicrobatchesRule(t *testing.T) {
	const lm = "  model: {num_layers: 8, hidden_size: 256, num_attention_heads: 4, seq_length: 256, vocab_size: 1000}\n"
	runRuleCases(t, []ruleCase{
		{"6 micro-batches over pp 4", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 1, global_batch_size: 12}\nmodules:\n- {name: language, num_ranks: 8, pp: 4, vpp: 2}\n",
			[]at{interleaved(5, 46, "language")}},
		{"8 micro-batches over pp 4", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 1, global_batch_size: 16}\nmodules:\n- {name: language, num_ranks: 8, pp: 4, vpp: 2}\n", nil},
		{"fewer micro-batches than pp", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 1, global_batch_size: 2}\nmodules:\n- {name: language, num_ranks: 8, pp: 4, vpp: 3}\n",
			[]at{interleaved(5, 46, "language")}},
		{"no interleaving: vpp 1", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 1, global_batch_size: 12}\nmodules:\n- {name: language, num_ranks: 8, pp: 4, vpp: 1}\n", nil},
		{"no global batch", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 1}\nmodules:\n- {name: language, num_ranks: 8, pp: 4, vpp: 2}\n", nil},
		// dp 2 x gtp_remat 2 = 4 lanes: 24 / 4 = 6 micro-batches.
		{"gtp_remat lanes count", "version: 1\nworld_size: 16\nbatch: {micro_batch_size: 1, global_batch_size: 24}\nmodules:\n- {name: language, num_ranks: 16, pp: 4, vpp: 2, gtp_remat: 2}\n",
			[]at{interleaved(5, 47, "language")}},
		{"gtp_remat lanes, 8 micro-batches", "version: 1\nworld_size: 16\nbatch: {micro_batch_size: 1, global_batch_size: 32}\nmodules:\n- {name: language, num_ranks: 16, pp: 4, vpp: 2, gtp_remat: 2}\n", nil},
		// An encoder runs the step's micro-batches too: language dp 4, 12 /
		// 4 = 3 micro-batches over vision's pp 2.
		{"an encoder's virtual pipeline", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 1, global_batch_size: 12}\nmodules:\n- {name: vision, num_ranks: 4, pp: 2, vpp: 2}\n- {name: language, num_ranks: 4}\n",
			[]at{interleaved(5, 44, "vision")}},
		{"a layout of two stages a pp rank", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 1, global_batch_size: 12}\nmodules:\n- name: language\n  num_ranks: 8\n  pp: 4\n  pipeline_model_parallel_layout: \"Et|t|t|t|t|t|t|tL\"\n" + lm,
			[]at{interleaved(8, 35, "language")}},
		{"a layout of one stage a pp rank", "version: 1\nworld_size: 8\nbatch: {micro_batch_size: 1, global_batch_size: 12}\nmodules:\n- name: language\n  num_ranks: 8\n  pp: 4\n  pipeline_model_parallel_layout: \"Ett|tt|tt|ttL\"\n" + lm, nil},
		// The MIMO runtimes refuse the virtual pipeline itself
		// (mimo-vpp-unsupported), not its micro-batches.
		{"megatron-lm runs no interleaved schedule", "version: 1\ntarget: megatron-lm\nworld_size: 8\nbatch: {micro_batch_size: 1, global_batch_size: 12}\ntraining: {use_distributed_optimizer: true}\nmodules:\n- {name: language, num_ranks: 8, pp: 4, vpp: 2}\n",
			[]at{mimoVPP(7, 46, "language")}},
		{"megatron-bridge runs no interleaved schedule", "version: 1\ntarget: megatron-bridge\nworld_size: 8\nbatch: {micro_batch_size: 2, global_batch_size: 12}\nmodules:\n- {name: language, num_ranks: 8, pp: 4, vpp: 2}\n",
			[]at{mimoVPP(6, 46, "language")}},
	})
}
