package validate_test

import "testing"

func mimoVPP(line, column int, module string) at {
	return at{"mimo-vpp-unsupported", line, column, module}
}

// TestMIMOVPPRule: targets megatron-lm and megatron-bridge refuse a
// module with pp above 1 and a virtual pipeline (vpp, or a
// pipeline_model_parallel_layout of more stages than pp); target core and
// a pipeline without interleaving pass.
func TestMIMOVPPRule(t *testing.T) {
	const lm = "  model: {num_layers: 8, hidden_size: 256, num_attention_heads: 4, seq_length: 256, vocab_size: 1000}\n"
	const opt = "training: {use_distributed_optimizer: true}\n"
	runRuleCases(t, []ruleCase{
		{"megatron-lm language vpp 2", "version: 1\ntarget: megatron-lm\nworld_size: 2\n" + opt + "modules:\n- {name: language, num_ranks: 2, pp: 2, vpp: 2}\n",
			[]at{mimoVPP(6, 46, "language")}},
		{"megatron-lm language vpp 1", "version: 1\ntarget: megatron-lm\nworld_size: 2\n" + opt + "modules:\n- {name: language, num_ranks: 2, pp: 2, vpp: 1}\n", nil},
		{"megatron-lm language beside an encoder", "version: 1\ntarget: megatron-lm\nworld_size: 5\n" + opt + "modules:\n- {name: vision, num_ranks: 1}\n- {name: language, num_ranks: 4, pp: 4, vpp: 2}\n",
			[]at{mimoVPP(7, 46, "language")}},
		{"megatron-lm layout of two stages a pp rank", "version: 1\ntarget: megatron-lm\nworld_size: 2\n" + opt + "modules:\n- name: language\n  num_ranks: 2\n  pp: 2\n  pipeline_model_parallel_layout: \"Ett|tt|tt|ttL\"\n" + lm,
			[]at{mimoVPP(9, 35, "language")}},
		// Refused too, but as a split key (mimo-split-unsupported).
		{"megatron-lm layout of one stage a pp rank", "version: 1\ntarget: megatron-lm\nworld_size: 2\n" + opt + "modules:\n- name: language\n  num_ranks: 2\n  pp: 2\n  pipeline_model_parallel_layout: \"Etttt|ttttL\"\n" + lm,
			[]at{{"mimo-split-unsupported", 9, 35, "language"}}},
		{"megatron-bridge layout of one stage a pp rank", "version: 1\ntarget: megatron-bridge\nworld_size: 2\nmodules:\n- name: language\n  num_ranks: 2\n  pp: 2\n  pipeline_model_parallel_layout: \"Etttt|ttttL\"\n" + lm, nil},
		{"megatron-bridge language vpp 2", "version: 1\ntarget: megatron-bridge\nworld_size: 3\nmodules:\n- {name: vision, num_ranks: 1}\n- {name: language, num_ranks: 2, pp: 2, vpp: 2}\n",
			[]at{mimoVPP(6, 46, "language")}},
		// Bridge builds every module the same way: an encoder's virtual
		// pipeline too.
		{"megatron-bridge encoder vpp 2", "version: 1\ntarget: megatron-bridge\nworld_size: 4\nmodules:\n- {name: vision, num_ranks: 2, pp: 2, vpp: 2}\n- {name: language, num_ranks: 2}\n",
			[]at{mimoVPP(5, 44, "vision")}},
		{"megatron-bridge vpp 1", "version: 1\ntarget: megatron-bridge\nworld_size: 3\nmodules:\n- {name: vision, num_ranks: 1}\n- {name: language, num_ranks: 2, pp: 2, vpp: 1}\n", nil},
		{"core runs the interleaved schedule", "version: 1\nworld_size: 2\nmodules:\n- {name: language, num_ranks: 2, pp: 2, vpp: 2}\n", nil},
	})
}
