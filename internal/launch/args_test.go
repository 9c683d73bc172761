package launch

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
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
				"--llm-dp", "2", "--llm-ep", "4", "--llm-expt-tp", "1", "--num-experts", "128", "--micro-batch-size", "1", "--global-batch-size", "8"},
		},
		{
			name: "--mimo-* names by default: Megatron-LM since PR #6894",
			src:  nemotron,
			o:    Options{LayoutArgs: true},
			want: []string{DefaultProgram,
				"--mimo-encoder-tp", "2", "--mimo-encoder-dp", "2", "--mimo-llm-offset", "4", "--mimo-llm-tp", "2", "--mimo-llm-cp", "1",
				"--mimo-llm-pp", "1", "--mimo-llm-dp", "2", "--mimo-llm-ep", "4", "--mimo-llm-expt-tp", "1",
				"--num-experts", "128", "--micro-batch-size", "1", "--global-batch-size", "8"},
		},
		{
			name: "a date after PR #6894 has the --mimo-* names too",
			src:  at(nemotron, "2026-09-01"),
			o:    Options{LayoutArgs: true},
			want: []string{DefaultProgram,
				"--mimo-encoder-tp", "2", "--mimo-encoder-dp", "2", "--mimo-llm-offset", "4", "--mimo-llm-tp", "2", "--mimo-llm-cp", "1",
				"--mimo-llm-pp", "1", "--mimo-llm-dp", "2", "--mimo-llm-ep", "4", "--mimo-llm-expt-tp", "1",
				"--num-experts", "128", "--micro-batch-size", "1", "--global-batch-size", "8"},
		},
		{
			name: "language alone is --llm-only, without encoder arguments",
			src:  at(llmOnly, "2026-08-22"),
			o:    Options{Hosts: []string{"a", "b"}, LayoutArgs: true},
			want: []string{DefaultProgram, "--llm-offset", "0", "--llm-tp", "2", "--llm-cp", "1", "--llm-pp", "2",
				"--llm-dp", "4", "--llm-ep", "4", "--llm-expt-tp", "1", "--micro-batch-size", "1", "--global-batch-size", "64", "--llm-only"},
		},
		{
			name: "language alone, --mimo-* names: --mimo-llm-only",
			src:  llmOnly,
			o:    Options{Hosts: []string{"a", "b"}, LayoutArgs: true},
			want: []string{DefaultProgram, "--mimo-llm-offset", "0", "--mimo-llm-tp", "2", "--mimo-llm-cp", "1", "--mimo-llm-pp", "2",
				"--mimo-llm-dp", "4", "--mimo-llm-ep", "4", "--mimo-llm-expt-tp", "1", "--micro-batch-size", "1", "--global-batch-size", "64",
				"--mimo-llm-only"},
		},
		{
			name: "no batch: the program's --micro-batch-size, which passes the fan-out check",
			src: `version: 1
target: megatron-lm
world_size: 6
modules:
  - {name: vision, num_ranks: 2}
  - {name: language, num_ranks: 4, tp: 2}
`,
			o: Options{LayoutArgs: true, Program: []string{"p.py", "--micro-batch-size=1"}},
			want: []string{"p.py", "--micro-batch-size=1", "--mimo-encoder-tp", "1", "--mimo-encoder-dp", "2", "--mimo-llm-offset", "2", "--mimo-llm-tp", "2",
				"--mimo-llm-cp", "1", "--mimo-llm-pp", "1", "--mimo-llm-dp", "2", "--mimo-llm-ep", "1", "--mimo-llm-expt-tp", "1"},
		},
		{
			// Megatron-LM's args.py test: tp 2, 4 weight shards -> gtp_remat 2,
			// dp = 4 / (tp*gtp) = 1; expert shards 2 over expt_tp 1 -> 2.
			name: "gtp_remat: total weight shards tp*gtp_remat, dp without GTP",
			src:  at(gtpLayout, "6570"),
			o:    Options{LayoutArgs: true},
			want: []string{DefaultProgram, "--encoder-tp", "2", "--encoder-dp", "2", "--llm-offset", "4", "--llm-tp", "2", "--llm-cp", "1",
				"--llm-pp", "1", "--llm-dp", "3", "--llm-ep", "3", "--llm-expt-tp", "2",
				"--tensor-parallel-num-weight-shards", "4", "--expert-tensor-parallel-num-weight-shards", "4", "--micro-batch-size", "2"},
		},
		{
			name: "gtp_remat with --mimo-* names",
			src:  gtpLayout,
			o:    Options{LayoutArgs: true},
			want: []string{DefaultProgram, "--mimo-encoder-tp", "2", "--mimo-encoder-dp", "2", "--mimo-llm-offset", "4", "--mimo-llm-tp", "2",
				"--mimo-llm-cp", "1", "--mimo-llm-pp", "1", "--mimo-llm-dp", "3", "--mimo-llm-ep", "3", "--mimo-llm-expt-tp", "2",
				"--tensor-parallel-num-weight-shards", "4", "--expert-tensor-parallel-num-weight-shards", "4", "--micro-batch-size", "2"},
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
`,
			o: Options{LayoutArgs: true},
			want: []string{DefaultProgram, "--mimo-encoder-tp", "2", "--mimo-encoder-dp", "2", "--mimo-llm-offset", "4", "--mimo-llm-tp", "1", "--mimo-llm-cp", "1",
				"--mimo-llm-pp", "1", "--mimo-llm-dp", "4", "--mimo-llm-ep", "1", "--mimo-llm-expt-tp", "2",
				"--expert-tensor-parallel-num-weight-shards", "4", "--micro-batch-size", "1"},
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
	_, d, err := Build(check(t, "version: 1\ntarget: megatron-lm\nworld_size: 4\nmodules:\n- {name: language, num_ranks: 4}\n"), Options{LayoutArgs: true, MasterPort: DefaultMasterPort})
	require.NoError(t, err)
	require.Len(t, d.Items, 1)
	assert.Equal(t, "micro-batch-required", d.Items[0].Rule)
}

// TestMegatronArgNames pins the two name sets: the plain names of issue 5
// (Megatron-LM's args.py before PR #6894), and the --mimo-* ones since.
func TestMegatronArgNames(t *testing.T) {
	assert.Equal(t, []string{"--encoder-tp", "--encoder-dp", "--llm-offset", "--llm-tp", "--llm-cp",
		"--llm-pp", "--llm-dp", "--llm-ep", "--llm-expt-tp", "--llm-only"}, plainArgs.all())
	assert.Equal(t, []string{"--mimo-encoder-tp", "--mimo-encoder-dp", "--mimo-llm-offset", "--mimo-llm-tp", "--mimo-llm-cp",
		"--mimo-llm-pp", "--mimo-llm-dp", "--mimo-llm-ep", "--mimo-llm-expt-tp", "--mimo-llm-only"}, mimoArgs.all())
	for i, n := range mimoArgs.all() {
		assert.Equal(t, "--mimo-"+plainArgs.all()[i][2:], n)
	}
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
	src := strings.Replace(llmOnly, "modules:\n  - {name: language, num_ranks: 16, tp: 2, pp: 2, ep: 4}",
		"training: {sequence_parallel: true}\nmodules:\n  - {name: language, num_ranks: 16, tp: 2, pp: 2, ep: 4, model: {num_layers: 4, hidden_size: 1024, num_attention_heads: 8, num_query_groups: 2, seq_length: 2048, vocab_size: 32000, swiglu: true, normalization: RMSNorm, add_bias_linear: false, num_experts: 8, moe_router_topk: 2, moe_layer_freq: [0, 1, 0, 1]}}", 1)
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
