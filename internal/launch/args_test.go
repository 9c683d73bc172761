package launch

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/megatron"
)

// program returns the program part of node 0's argv.
func program(p *Plan) []string { return p.Node(0).Command[len(p.Node(0).Command)-len(p.Program):] }

func TestMegatronArgs(t *testing.T) {
	gtpLayout := `version: 1
target: megatron-lm
world_size: 16
batch: {micro_batch_size: 2}
modules:
  - {name: vision, num_ranks: 4, tp: 2}
  - {name: language, num_ranks: 12, tp: 2, gtp_remat: 2, ep: 3, expt_tp: 2, expt_gtp_remat: 2}
training: {use_distributed_optimizer: true}
`
	tests := []struct {
		name string
		src  string
		o    Options
		want []string
	}{
		{
			name: "encoder and MoE language, as run_hetero_nemotron_20l_mock_train.sh, before PR #6894",
			src:  at(nemotron, "6570"),
			o:    Options{LayoutArgs: true, Program: []string{"examples/mimo/pretrain_mimo.py", "--model-provider", "nemotron-moe-vlm"}},
			want: []string{"examples/mimo/pretrain_mimo.py", "--model-provider", "nemotron-moe-vlm",
				"--encoder-tp", "2", "--encoder-dp", "2", "--llm-offset", "4", "--llm-tp", "2", "--llm-cp", "1", "--llm-pp", "1",
				"--llm-dp", "2", "--llm-ep", "4", "--llm-expt-tp", "1", "--num-experts", "128", "--micro-batch-size", "1", "--global-batch-size", "8", "--use-distributed-optimizer"},
		},
		{
			name: "--mimo-* names by default: Megatron-LM since PR #6894",
			src:  nemotron,
			o:    Options{LayoutArgs: true},
			want: []string{DefaultProgram,
				"--mimo-encoder-tp", "2", "--mimo-encoder-dp", "2", "--mimo-llm-offset", "4", "--mimo-llm-tp", "2", "--mimo-llm-cp", "1",
				"--mimo-llm-pp", "1", "--mimo-llm-dp", "2", "--mimo-llm-ep", "4", "--mimo-llm-expt-tp", "1",
				"--num-experts", "128", "--micro-batch-size", "1", "--global-batch-size", "8", "--use-distributed-optimizer"},
		},
		{
			name: "a date after PR #6894 has the --mimo-* names too",
			src:  at(nemotron, "2026-09-01"),
			o:    Options{LayoutArgs: true},
			want: []string{DefaultProgram,
				"--mimo-encoder-tp", "2", "--mimo-encoder-dp", "2", "--mimo-llm-offset", "4", "--mimo-llm-tp", "2", "--mimo-llm-cp", "1",
				"--mimo-llm-pp", "1", "--mimo-llm-dp", "2", "--mimo-llm-ep", "4", "--mimo-llm-expt-tp", "1",
				"--num-experts", "128", "--micro-batch-size", "1", "--global-batch-size", "8", "--use-distributed-optimizer"},
		},
		{
			name: "language alone is --llm-only, without encoder arguments",
			src:  at(llmOnly, "2026-08-22"),
			o:    Options{Hosts: []string{"a", "b"}, LayoutArgs: true},
			want: []string{DefaultProgram, "--llm-offset", "0", "--llm-tp", "2", "--llm-cp", "1", "--llm-pp", "2",
				"--llm-dp", "4", "--llm-ep", "4", "--llm-expt-tp", "1", "--micro-batch-size", "1", "--global-batch-size", "64", "--use-distributed-optimizer", "--llm-only"},
		},
		{
			name: "language alone, --mimo-* names: --mimo-llm-only",
			src:  llmOnly,
			o:    Options{Hosts: []string{"a", "b"}, LayoutArgs: true},
			want: []string{DefaultProgram, "--mimo-llm-offset", "0", "--mimo-llm-tp", "2", "--mimo-llm-cp", "1", "--mimo-llm-pp", "2",
				"--mimo-llm-dp", "4", "--mimo-llm-ep", "4", "--mimo-llm-expt-tp", "1", "--micro-batch-size", "1", "--global-batch-size", "64",
				"--use-distributed-optimizer", "--mimo-llm-only"},
		},
		{
			name: "no batch: the program's --micro-batch-size, which passes the fan-out check",
			src: `version: 1
target: megatron-lm
world_size: 6
modules:
  - {name: vision, num_ranks: 2}
  - {name: language, num_ranks: 4, tp: 2}
training: {use_distributed_optimizer: true}
`,
			o: Options{LayoutArgs: true, Program: []string{"p.py", "--micro-batch-size=1"}},
			want: []string{"p.py", "--micro-batch-size=1", "--mimo-encoder-tp", "1", "--mimo-encoder-dp", "2", "--mimo-llm-offset", "2", "--mimo-llm-tp", "2",
				"--mimo-llm-cp", "1", "--mimo-llm-pp", "1", "--mimo-llm-dp", "2", "--mimo-llm-ep", "1", "--mimo-llm-expt-tp", "1", "--use-distributed-optimizer"},
		},
		{
			// Megatron-LM's args.py test: tp 2, 4 weight shards -> gtp_remat 2,
			// dp = 4 / (tp*gtp) = 1; expert shards 2 over expt_tp 1 -> 2.
			name: "gtp_remat: total weight shards tp*gtp_remat, dp without GTP",
			src:  at(gtpLayout, "6570"),
			o:    Options{LayoutArgs: true},
			want: []string{DefaultProgram, "--encoder-tp", "2", "--encoder-dp", "2", "--llm-offset", "4", "--llm-tp", "2", "--llm-cp", "1",
				"--llm-pp", "1", "--llm-dp", "3", "--llm-ep", "3", "--llm-expt-tp", "2",
				"--tensor-parallel-num-weight-shards", "4", "--expert-tensor-parallel-num-weight-shards", "4", "--micro-batch-size", "2", "--use-distributed-optimizer"},
		},
		{
			name: "gtp_remat with --mimo-* names",
			src:  gtpLayout,
			o:    Options{LayoutArgs: true},
			want: []string{DefaultProgram, "--mimo-encoder-tp", "2", "--mimo-encoder-dp", "2", "--mimo-llm-offset", "4", "--mimo-llm-tp", "2",
				"--mimo-llm-cp", "1", "--mimo-llm-pp", "1", "--mimo-llm-dp", "3", "--mimo-llm-ep", "3", "--mimo-llm-expt-tp", "2",
				"--tensor-parallel-num-weight-shards", "4", "--expert-tensor-parallel-num-weight-shards", "4", "--micro-batch-size", "2", "--use-distributed-optimizer"},
		},
		{
			name: "expt_gtp_remat alone",
			src: `version: 1
target: megatron-lm
world_size: 8
batch: {micro_batch_size: 1}
modules:
  - {name: vision, num_ranks: 4, tp: 2}
  - {name: language, num_ranks: 4, ep: 1, expt_tp: 2, expt_gtp_remat: 2}
training: {use_distributed_optimizer: true}
`,
			o: Options{LayoutArgs: true},
			want: []string{DefaultProgram, "--mimo-encoder-tp", "2", "--mimo-encoder-dp", "2", "--mimo-llm-offset", "4", "--mimo-llm-tp", "1", "--mimo-llm-cp", "1",
				"--mimo-llm-pp", "1", "--mimo-llm-dp", "4", "--mimo-llm-ep", "1", "--mimo-llm-expt-tp", "2",
				"--expert-tensor-parallel-num-weight-shards", "4", "--micro-batch-size", "1", "--use-distributed-optimizer"},
		},
		{
			name: "layout arguments off",
			src:  nemotron,
			o:    Options{Program: []string{"my.py", "--llm-tp", "9"}},
			want: []string{"my.py", "--llm-tp", "9"},
		},
		{
			name: "another target gets no layout arguments",
			src:  threeModule,
			o:    Options{Hosts: hosts4, LayoutArgs: true, Program: []string{"train.py", "--x"}},
			want: []string{"train.py", "--x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build(t, tt.src, tt.o)
			assert.Equal(t, tt.want, p.Program)
			assert.Equal(t, tt.want, program(p))
			assert.Empty(t, p.Notes)
		})
	}
}

// at pins a layout's target_version.
func at(src, version string) string {
	return strings.Replace(src, "version: 1\n", "version: 1\ntarget_version: "+version+"\n", 1)
}

// TestMicroBatchRequired: Megatron-LM stops without --micro-batch-size, or
// with one that fails args.py's fan-out check.
func TestMicroBatchRequired(t *testing.T) {
	const src = `version: 1
target: megatron-lm
world_size: 8
modules:
  - {name: vision, num_ranks: 4, tp: 1}
  - {name: language, num_ranks: 4, tp: 2}
training: {use_distributed_optimizer: true}
`
	for _, tc := range []struct {
		name string
		prog []string
		want string
	}{
		{"none", nil, "the plan has no --micro-batch-size, which Megatron-LM requires"},
		{"fails the fan-out check", []string{"p.py", "--micro-batch-size", "1"}, "the program's --micro-batch-size 1 x --mimo-llm-dp 2 x GTP 1 is not divisible by --mimo-encoder-dp 4"},
		{"not a number", []string{"p.py", "--micro-batch-size=x"}, `--micro-batch-size "x" is not a whole number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, d, err := Build(check(t, src), Options{LayoutArgs: true, MasterPort: DefaultMasterPort, Program: tc.prog})
			require.NoError(t, err)
			assert.Nil(t, p)
			require.Len(t, d.Items, 1)
			assert.Equal(t, "micro-batch-required", d.Items[0].Rule)
			assert.Contains(t, d.Items[0].Message, tc.want)
			assert.NotEmpty(t, d.Items[0].Hint)
		})
	}
	p := build(t, src, Options{LayoutArgs: true, Program: []string{"p.py", "--micro-batch-size", "2"}})
	assert.Equal(t, "2", p.Program[2])
	// An llm-only plan needs it too (validate_args asserts it).
	_, d, err := Build(check(t, "version: 1\ntarget: megatron-lm\nworld_size: 4\nmodules:\n- {name: language, num_ranks: 4}\ntraining: {use_distributed_optimizer: true}\n"), Options{LayoutArgs: true, MasterPort: DefaultMasterPort})
	require.NoError(t, err)
	require.Len(t, d.Items, 1)
	assert.Equal(t, "micro-batch-required", d.Items[0].Rule)
}

// With the layout arguments off, a layout that pretrain_mimo.py's
// arguments cannot express (two encoders) launches with the default
// program. (validate's megatron-lm rules refuse such a layout; it is
// validated as core and the target changed afterwards.)
func TestNoLayoutArgsDefaultProgram(t *testing.T) {
	tp := check(t, threeModule)
	tp.Target = layout.TargetMegatronLM
	p, _, err := Build(tp, Options{Hosts: hosts4, MasterPort: DefaultMasterPort})
	require.NoError(t, err)
	require.NotNil(t, p)
	assert.Equal(t, []string{DefaultProgram}, p.Program)
}

// TestModelArgs: a language model becomes Megatron-LM's model arguments
// (names checked against each version's parser by
// TestMegatronArgvFixture); every destination model.MegatronArgs gives
// has a flag here.
func TestModelArgs(t *testing.T) {
	assert.Empty(t, modelDests(), "destinations without a flag")
	// MoE with tp 2 trains only with sequence parallelism
	// (moe-tp-needs-sequence-parallel).
	src := strings.Replace(strings.Replace(llmOnly, "training: {use_distributed_optimizer: true}", "training: {use_distributed_optimizer: true, sequence_parallel: true}", 1), "modules:\n  - {name: language, num_ranks: 16, tp: 2, pp: 2, ep: 4}",
		"modules:\n  - {name: language, num_ranks: 16, tp: 2, pp: 2, ep: 4, model: {num_layers: 4, hidden_size: 1024, num_attention_heads: 8, num_query_groups: 2, seq_length: 2048, vocab_size: 32000, swiglu: true, normalization: RMSNorm, add_bias_linear: false, num_experts: 8, moe_router_topk: 2, moe_layer_freq: [0, 1, 0, 1]}}", 1)
	p := build(t, src, Options{Hosts: []string{"a", "b"}, LayoutArgs: true})
	got := strings.Join(p.Program, " ")
	for _, want := range []string{"--num-experts 8", "--group-query-attention", "--num-layers 4", "--hidden-size 1024",
		"--num-attention-heads 8", "--num-query-groups 2", "--seq-length 2048", "--vocab-size 32000", "--swiglu",
		"--normalization RMSNorm", "--disable-bias-linear", "--moe-router-topk 2", "--moe-layer-freq [0,1,0,1]"} {
		assert.Contains(t, got, want)
	}
	assert.Equal(t, 1, strings.Count(got, "--num-experts"), "once, from the model")
	assert.True(t, strings.HasSuffix(got, "--mimo-llm-only"))
	_, _, err := Build(check(t, src), Options{Hosts: []string{"a", "b"}, LayoutArgs: true, MasterPort: DefaultMasterPort,
		Program: []string{"p.py", "--num-layers", "2"}})
	assert.ErrorContains(t, err, "already set --num-layers")
}

// TestTrainingFlagsCoverLayout: every key of the layout's training block
// has its Megatron-LM argument (names checked against upstream's options
// by internal/megatron, values by TestMegatronArgvFixture).
func TestTrainingFlagsCoverLayout(t *testing.T) {
	var keys, flags []string
	for _, k := range layout.TrainingKeys() {
		keys = append(keys, k.Name)
	}
	for _, f := range megatron.TrainingFlags {
		flags = append(flags, f.Key)
	}
	assert.Equal(t, keys, flags)
}

// TestTrainingConflicts: a program argument that sets a training setting
// otherwise than the layout is refused against the layout's key (or its
// training block, or the file, when the layout leaves it at Megatron's
// default); one that agrees with what launch-plan writes is a repeat
// (usage error); one that agrees with a default is accepted.
func TestTrainingConflicts(t *testing.T) {
	const src = `version: 1
target: megatron-lm
world_size: 8
batch: {micro_batch_size: 1}
training:
  use_distributed_optimizer: true
  recompute_granularity: selective
  grad_reduce_in_fp32: false
modules:
  - {name: language, num_ranks: 8, tp: 2}
`
	for _, c := range []struct {
		args  string
		rules []string // training-argument-conflict at these line:column
		err   string
	}{
		{args: "--recompute-granularity full", rules: []string{"7:26"}},
		{args: "--recompute-granularity=full --accumulate-allreduce-grads-in-fp32", rules: []string{"7:26", "8:24"}},
		{args: "--sequence-parallel --fp8-format hybrid", rules: []string{"6:3", "6:3"}},
		{args: "--recompute-activations"}, // selective, as the layout says
		{args: "--transformer-impl transformer_engine --lr 1e-4"},
		{args: "--use-distributed-optimizer", err: "already set --use-distributed-optimizer"},
		{args: "--grad-reduce-in-bf16", err: "already set --grad-reduce-in-bf16"},
	} {
		t.Run(c.args, func(t *testing.T) {
			p, d, err := Build(check(t, src), Options{LayoutArgs: true, MasterPort: DefaultMasterPort,
				Program: append([]string{DefaultProgram}, strings.Fields(c.args)...)})
			if c.err != "" {
				assert.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			var got []string
			for _, x := range d.Items {
				if x.Rule == "training-argument-conflict" {
					got = append(got, fmt.Sprintf("%d:%d", x.Line, x.Column))
					assert.Contains(t, x.Hint, "set training.")
				}
			}
			assert.Equal(t, c.rules, got)
			assert.Equal(t, len(c.rules) == 0, p != nil)
		})
	}
	// A key the layout leaves out is Megatron's default.
	bare := strings.Replace(src, "  recompute_granularity: selective\n  grad_reduce_in_fp32: false\n", "", 1)
	_, d, err := Build(check(t, bare), Options{LayoutArgs: true, MasterPort: DefaultMasterPort,
		Program: []string{DefaultProgram, "--sequence-parallel"}})
	require.NoError(t, err)
	require.Len(t, d.Items, 1)
	assert.Contains(t, d.Items[0].Message, "the layout leaves training.sequence_parallel at Megatron's default, false")
}

// A plan with a model trains in bf16, the precision the estimate
// assumed; one without a model passes no precision.
func TestPrecision(t *testing.T) {
	const withModel = `version: 1
target: megatron-lm
world_size: 8
batch: {micro_batch_size: 1}
modules:
  - {name: language, num_ranks: 8, tp: 2, model: {num_layers: 4, hidden_size: 1024, num_attention_heads: 8, seq_length: 4096}}
training: {use_distributed_optimizer: true}
`
	for _, c := range []struct {
		src, args string
		bf16      bool
		err       string
	}{
		{src: withModel, bf16: true},
		{src: withModel, args: "--fp16", err: "drop --fp16"},
		{src: withModel, args: "--bf16", err: "already set --bf16"},
		{src: strings.Replace(withModel, ", model: {num_layers: 4, hidden_size: 1024, num_attention_heads: 8, seq_length: 4096}", "", 1), args: "--fp16"},
	} {
		p, _, err := Build(check(t, c.src), Options{LayoutArgs: true, MasterPort: DefaultMasterPort,
			Program: append([]string{DefaultProgram}, strings.Fields(c.args)...)})
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, c.args)
			continue
		}
		require.NoError(t, err, c.args)
		require.NotNil(t, p)
		cmd := strings.Join(p.Program, " ")
		assert.Equal(t, c.bf16, strings.Contains(cmd, " --bf16"), cmd)
	}
}
