package validate_test

import "testing"

func mimoSplit(line, column int) at {
	return at{"mimo-split-unsupported", line, column, "language"}
}

// TestMIMOSplitRule: target megatron-lm, from PR #5602, refuses the
// language module's pipeline_model_parallel_layout and
// account_for_*_in_pipeline_split, each at its key, whatever the pp;
// decoder_first/last_pipeline_num_layers, target core, target
// megatron-bridge and a version before the example built a hybrid model
// pass.
func TestMIMOSplitRule(t *testing.T) {
	// The accounted embedding and loss stages count as layers: 7 + 1 and
	// 6 + 2 split evenly over pp 2.
	const model = "  model: {num_layers: 8, hidden_size: 256, num_attention_heads: 4, seq_length: 256, vocab_size: 1000}\n"
	const model7 = "  model: {num_layers: 7, hidden_size: 256, num_attention_heads: 4, seq_length: 256, vocab_size: 1000}\n"
	const model6 = "  model: {num_layers: 6, hidden_size: 256, num_attention_heads: 4, seq_length: 256, vocab_size: 1000}\n"
	const head = "version: 1\ntarget: megatron-lm\nworld_size: 2\ntraining: {use_distributed_optimizer: true}\nmodules:\n- name: language\n  num_ranks: 2\n"
	runRuleCases(t, []ruleCase{
		{"account for embedding", head + "  pp: 2\n  account_for_embedding_in_pipeline_split: true\n" + model7,
			[]at{mimoSplit(9, 44)}},
		{"account for loss", head + "  pp: 2\n  account_for_loss_in_pipeline_split: true\n" + model7,
			[]at{mimoSplit(9, 39)}},
		{"both refused keys, each reported", head + "  pp: 2\n  account_for_embedding_in_pipeline_split: true\n  account_for_loss_in_pipeline_split: true\n" + model6,
			[]at{mimoSplit(9, 44), mimoSplit(10, 39)}},
		{"false is no flag", head + "  pp: 2\n  account_for_loss_in_pipeline_split: false\n" + model, nil},
		{"layout at pp 1", head + "  pipeline_model_parallel_layout: \"EttttttttL\"\n" + model,
			[]at{mimoSplit(8, 35)}},
		{"decoder first and last pass", head + "  pp: 2\n  decoder_first_pipeline_num_layers: 3\n  decoder_last_pipeline_num_layers: 5\n" + model, nil},
		{"before PR 5602", "version: 1\ntarget: megatron-lm\ntarget_version: \"5375\"\nworld_size: 2\nmodules:\n- name: language\n  num_ranks: 2\n  pp: 2\n  account_for_loss_in_pipeline_split: true\n" + model7, nil},
		{"target megatron-bridge", "version: 1\ntarget: megatron-bridge\nworld_size: 2\nmodules:\n- name: language\n  num_ranks: 2\n  pp: 2\n  account_for_loss_in_pipeline_split: true\n" + model7, nil},
		{"target core", "version: 1\nworld_size: 2\nmodules:\n- name: language\n  num_ranks: 2\n  pp: 2\n  pipeline_model_parallel_layout: \"Etttt|ttttL\"\n" + model, nil},
	})
}
