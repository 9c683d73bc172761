package importer

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/upstream"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func check(t *testing.T, src string, version string) *validate.Result {
	t.Helper()
	l, d := layout.Parse("layout.yaml", []byte(src))
	if version != "" {
		v, err := upstream.Parse(version)
		require.NoError(t, err)
		l.TargetVersion = v
	}
	res := validate.Check(l, d)
	var b strings.Builder
	require.NoError(t, diag.WriteText(&b, res.Diags))
	require.True(t, res.Valid(false), "invalid:\n%s\n%s", src, b.String())
	return res
}

// same: two layouts describe one job (the name aside, which no argv or
// environment carries).
func same(t *testing.T, want, got *validate.Result) {
	t.Helper()
	wt, gt := want.Topology, got.Topology
	assert.Equal(t, wt.Target, gt.Target)
	assert.Equal(t, wt.WorldSize, gt.WorldSize)
	// No cluster is one node of world_size GPUs: the same torchrun.
	one := func(c *layout.Cluster, world int) layout.Cluster {
		if c == nil {
			return layout.Cluster{Nodes: 1, GPUsPerNode: world}
		}
		return *c
	}
	assert.Equal(t, one(wt.Cluster, wt.WorldSize), one(gt.Cluster, gt.WorldSize))
	assert.Equal(t, wt.Batch, gt.Batch)
	assert.Equal(t, want.Layout.Training, got.Layout.Training, "training")
	assert.Equal(t, want.Layout.Env, got.Layout.Env, "env")
	require.Len(t, gt.Modules, len(wt.Modules))
	for i, m := range wt.Modules {
		g := gt.Module(m.Name)
		require.NotNil(t, g, m.Name)
		assert.Equal(t, m.Spec, g.Spec, m.Name)
		assert.Equal(t, want.Layout.Modules[i].NumExperts, experts(got.Layout, m.Name), m.Name)
		// vpp, the uneven split and freeze, which the launch carries too.
		wl, gl := want.Layout.Modules[i], layoutModule(got.Layout, m.Name)
		assert.Equal(t, max(wl.VPP, 1), max(gl.VPP, 1), "%s vpp", m.Name)
		assert.Equal(t, wl.Split, gl.Split, "%s split", m.Name)
		assert.Equal(t, wl.Freeze, gl.Freeze, "%s freeze", m.Name)
	}
	// The language model, as Megatron-LM's arguments (the launch writes
	// its resolved values, Megatron's defaults filled in).
	wm, gm := languageModel(want.Layout), languageModel(got.Layout)
	if wm == nil {
		assert.Nil(t, gm, "a model from a launch without one")
	} else if assert.NotNil(t, gm, "the model") {
		one := model.Parallel{NumRanks: 1, TP: 1, PP: 1, DP: 1, EP: 1}
		assert.Equal(t, model.MegatronArgs(wm.Config, one, model.Training{}).Model, model.MegatronArgs(gm.Config, one, model.Training{}).Model)
		if wm.Config.NumExperts > 0 { // the router's settings, which launch-plan writes for MoE alone
			assert.Equal(t, wm.Config.MoERouterPreSoftmax, gm.Config.MoERouterPreSoftmax)
			assert.Equal(t, wm.Config.MoERouterScoreFunction, gm.Config.MoERouterScoreFunction)
		}
	}
	// The training settings, Megatron's defaults where not given.
	training := func(l *layout.Layout) layout.Training {
		if l.Training == nil {
			return layout.Training{}
		}
		return *l.Training
	}
	assert.Equal(t, training(want.Layout), training(got.Layout), "training")
	for _, pr := range []int{upstream.PRMimoNames, upstream.PRGTP} {
		if want.Layout.TargetVersion.Has(upstream.PRMimoNames) {
			assert.Equal(t, want.Layout.TargetVersion.Has(pr), got.Layout.TargetVersion.Has(pr), "PR #%d", pr)
		}
	}
}

func layoutModule(l *layout.Layout, name string) layout.Module {
	for _, m := range l.Modules {
		if m.Name == name {
			return m
		}
	}
	return layout.Module{}
}

func languageModel(l *layout.Layout) *layout.Model {
	for _, m := range l.Modules {
		if m.Name == grid.LanguageModule {
			return m.Model
		}
	}
	return nil
}

func experts(l *layout.Layout, name string) int {
	for _, m := range l.Modules {
		if m.Name == name {
			return m.NumExperts
		}
	}
	return -1
}

func readLayout(t *testing.T, rel string) string {
	b, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), rel))
	require.NoError(t, err)
	return string(b)
}

const gtp = `version: 1
target: megatron-lm
world_size: 16
batch: {micro_batch_size: 2, global_batch_size: 24}
modules:
  - {name: vision, num_ranks: 4, tp: 2}
  - {name: language, num_ranks: 12, tp: 2, gtp_remat: 2, ep: 3, expt_tp: 2, expt_gtp_remat: 2, num_experts: 6}
training: {use_distributed_optimizer: true}
`

// TestMegatronLMRoundTrip: import megatron-lm of a node's launch-plan argv
// is the layout, for each name generation.
func TestMegatronLMRoundTrip(t *testing.T) {
	layouts := map[string]string{
		"nemotron": readLayout(t, "layouts/nemotron-vlm-8gpu.yaml"),
		"llm-only": readLayout(t, "layouts/llm-only-moe-16gpu.yaml"),
		"gtp":      gtp,
		"pipeline": "version: 1\ntarget: megatron-lm\nworld_size: 10\nbatch: {micro_batch_size: 1}\nmodules:\n- {name: vision, num_ranks: 2}\n- {name: language, num_ranks: 8, tp: 2, pp: 2, ep: 2, expt_tp: 2, num_experts: 8}\ntraining: {use_distributed_optimizer: true}\n",
		// The output layer's deferred weight gradient, and a negative limit
		// Megatron takes without deferral.
		"defer":     "version: 1\ntarget: megatron-lm\nworld_size: 10\nbatch: {micro_batch_size: 1}\nmodules:\n- {name: vision, num_ranks: 2}\n- {name: language, num_ranks: 8, tp: 2, pp: 2}\ntraining: {use_distributed_optimizer: true, defer_embedding_wgrad_compute: true, wgrad_deferral_limit: 22}\n",
		"no fusion": "version: 1\ntarget: megatron-lm\nworld_size: 10\nbatch: {micro_batch_size: 1}\nmodules:\n- {name: vision, num_ranks: 2}\n- {name: language, num_ranks: 8, tp: 2, pp: 2}\ntraining: {use_distributed_optimizer: true, gradient_accumulation_fusion: false, wgrad_deferral_limit: -1}\n",
	}
	for name, src := range layouts {
		for _, v := range []string{"", "6570", "2026-08-22"} {
			t.Run(name+"@"+v, func(t *testing.T) {
				res := check(t, src, v)
				o := launch.Options{LayoutArgs: true, MasterPort: launch.DefaultMasterPort}
				if c := res.Topology.Cluster; c != nil {
					for i := range c.Nodes {
						o.Hosts = append(o.Hosts, "n"+strconv.Itoa(i))
					}
				}
				p, d, err := launch.Build(res.Topology, o)
				require.NoError(t, err)
				require.NotNil(t, p, "%v", d)
				argv := p.Node(0).Command
				l, err := MegatronLM(argv, "vision")
				require.NoError(t, err)
				got := check(t, yamlOf(t, l), "")
				same(t, res, got)
				// The program's arguments alone: the world from the grids.
				l, err = MegatronLM(argv[6:], "vision")
				require.NoError(t, err)
				assert.Equal(t, res.Topology.WorldSize, l.WorldSize)
			})
		}
	}
}

func TestMegatronLMDefaultsAndErrors(t *testing.T) {
	// args.py's defaults: encoder tp 2 dp 2 at 0, language tp 2 dp 2 at 4.
	l, err := MegatronLM([]string{"pretrain_mimo.py", "--micro-batch-size=1"}, "vision")
	require.NoError(t, err)
	assert.Equal(t, 8, l.WorldSize)
	assert.Equal(t, Module{Name: "vision", NumRanks: 4, TP: 2, GTPRemat: 1, CP: 1, PP: 1, EP: 1, ExptTP: 1, ExptGTPRemat: 1}, l.Modules[0])
	assert.Equal(t, 4, l.Modules[1].RankOffset)
	assert.Empty(t, l.TargetVersion, "no grid names: the newest")
	l, err = MegatronLM([]string{"--llm-tp", "4", "--llm-offset", "4", "--llm-dp", "1"}, "img")
	require.NoError(t, err)
	assert.Equal(t, "5720", l.TargetVersion, "plain names: the newest upstream that takes them")
	assert.Equal(t, "img", l.Modules[0].Name)

	for argv, want := range map[string]string{
		"--llm-tp 2 --mimo-llm-dp 2": "mixes the plain grid names",
		"--llm-tp x":                 `--llm-tp "x" is not a whole number`,
		"--llm-tp 0":                 "--llm-tp must be 1 or more",
		"--llm-tp 2 --tensor-parallel-num-weight-shards 3": "not a multiple of the language tp 2",
		"--llm-tp":                     "--llm-tp has no value",
		"--llm-tp --llm-dp 2":          "--llm-tp has no value",
		"--mimo-llm-tpp 4":             "--mimo-llm-tpp is not an argument of Megatron-LM's pretrain_mimo.py: did you mean --mimo-llm-tp?",
		"--llm_tp 4 --llm-dp 2":        "--llm_tp is not an argument of Megatron-LM's pretrain_mimo.py: did you mean --llm-tp?",
		"--num-layer 4":                "did you mean --num-layers?",
		"--lr 1e-4 --sequence-paralel": "did you mean --sequence-parallel?",
		"--qqqqqqqqqqqq 1":             "--qqqqqqqqqqqq is not an argument of Megatron-LM's pretrain_mimo.py (arguments.py",
		"--swiglu=true":                "--swiglu takes no value",
		"--swiglu true":                `"true" is no argument's value`,
		"--moe-layer-freq ([0]*3)":     "mimoplan reads a whole number or a list of 0s and 1s",
		"--moe-layer-freq [0,2]":       "mimoplan reads a whole number or a list of 0s and 1s",
	} {
		_, err := MegatronLM(strings.Fields(argv), "vision")
		assert.ErrorContains(t, err, want, argv)
	}
}

// TestBridgeEnvRoundTrip: import bridge-env --from-script of a
// megatron-bridge layout's sh and slurm plans is the layout, its training
// settings and its env block (from the plan's topology) included.
func TestBridgeEnvRoundTrip(t *testing.T) {
	for name, src := range map[string]string{
		"llava": "version: 1\ntarget: megatron-bridge\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 4, tp: 4}\n- {name: vision, num_ranks: 4, tp: 4, rank_offset: 4}\n",
		"audio": "version: 1\ntarget: megatron-bridge\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 4, tp: 4}\n- {name: vision, num_ranks: 2, tp: 2, rank_offset: 4}\n- {name: audio, num_ranks: 2, tp: 2, rank_offset: 6}\n",
		"pp":    "version: 1\ntarget: megatron-bridge\ncluster: {nodes: 2, gpus_per_node: 8}\nmodules:\n- {name: vision, num_ranks: 4, tp: 1}\n- {name: language, num_ranks: 12, tp: 2, pp: 3, rank_offset: 4}\n",
		"training": "version: 1\ntarget: megatron-bridge\nworld_size: 8\ntraining: {use_distributed_optimizer: true, sequence_parallel: true, recompute_granularity: full, recompute_method: block, recompute_num_layers: 2, grad_reduce_in_fp32: false, attention_backend: flash}\n" +
			"modules:\n- {name: language, num_ranks: 4, tp: 4}\n- {name: vision, num_ranks: 4, tp: 4, rank_offset: 4}\n",
		"env": "version: 1\ntarget: megatron-bridge\nworld_size: 8\nenv: {PYTORCH_CUDA_ALLOC_CONF: \"expandable_segments:True,max_split_size_mb:512\", CUDA_DEVICE_MAX_CONNECTIONS: 1, A_B: 'it''s \"q\" $x'}\n" +
			"modules:\n- {name: language, num_ranks: 4, tp: 4}\n- {name: vision, num_ranks: 4, tp: 4, rank_offset: 4}\n",
	} {
		t.Run(name, func(t *testing.T) {
			res := check(t, src, "")
			p, _, err := launch.Build(res.Topology, launch.Options{Program: []string{"llava.py"}, MasterPort: launch.DefaultMasterPort, Hosts: hostsFor(res)})
			require.NoError(t, err)
			for _, format := range []string{"sh", "slurm"} {
				var b bytes.Buffer
				require.NoError(t, launch.Write(&b, format, p))
				script := filepath.Join(t.TempDir(), "plan."+format)
				require.NoError(t, os.WriteFile(script, b.Bytes(), 0o600))
				l, err := BridgeSource(script, nil)
				require.NoError(t, err)
				got := check(t, yamlOf(t, l), "")
				// The variables carry no cluster: the world alone.
				want := *res.Topology
				want.Cluster = nil
				got.Topology.Cluster = nil
				same(t, &validate.Result{Layout: res.Layout, Topology: &want}, got)
			}
		})
	}
}

func hostsFor(res *validate.Result) []string {
	if res.Topology.Cluster == nil {
		return nil
	}
	var hs []string
	for i := range res.Topology.Cluster.Nodes {
		hs = append(hs, "n"+strconv.Itoa(i))
	}
	return hs
}

func TestBridgeEnvErrors(t *testing.T) {
	_, err := BridgeEnv(map[string]string{"PATH": "/bin"})
	assert.ErrorContains(t, err, "no MIMO_")
	_, err = BridgeEnv(map[string]string{"MIMO_LLM_TP": "2", "MIMO_LLM_PP": "1", "MIMO_LLM_DP": "2"})
	assert.ErrorContains(t, err, "MIMO_LLM_OFFSET is missing")
	_, err = BridgeEnv(map[string]string{"MIMO_LLM_TP": "two"})
	assert.ErrorContains(t, err, `MIMO_LLM_TP="two" is not a whole number`)
}

func TestScriptEnv(t *testing.T) {
	env, err := ScriptEnv(strings.NewReader(`#!/bin/bash
# MIMO_LLM_TP=9 in a comment
export MIMO_LLM_TP=2
MIMO_LLM_DP=2 MIMO_VISION_TP='2' MIMO_VISION_DP="2" torchrun --nproc-per-node 8 llava.py MIMO_LLM_PP=7
export A="x y" B=z\ w; C=never
echo MIMO_AUDIO_TP=4
`))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"MIMO_LLM_TP": "2", "MIMO_LLM_DP": "2", "MIMO_VISION_TP": "2", "MIMO_VISION_DP": "2",
		"A": "x y", "B": "z w"}, env)
}

// TestMegatronLMRoundTripProperty: for layouts drawn at random from what
// the MIMO example can express (one encoder at rank 0 with tp and dp, a
// language module with tp, gtp_remat, pp, dp, ep, expt_tp,
// expt_gtp_remat, experts and a batch, or a language module alone), every
// valid one comes back from import megatron-lm of its plan unchanged.
func TestMegatronLMRoundTripProperty(t *testing.T) {
	pick := func(r *rand.Rand, xs ...int) int { return xs[r.IntN(len(xs))] }
	r := rand.New(rand.NewPCG(12, 2026))
	valid, models, trainings, pipelines, frozen := 0, 0, 0, 0, 0
	for i := 0; i < 1500; i++ {
		etp, edp := pick(r, 1, 2, 4), pick(r, 1, 2, 4)
		tp, gtpr, pp, dp := pick(r, 1, 2, 4), pick(r, 1, 2), pick(r, 1, 2), pick(r, 1, 2, 3)
		ep, xtp, xgtp := pick(r, 1, 2, 4), pick(r, 1, 2), pick(r, 1, 2)
		llm := tp * gtpr * pp * dp
		var b strings.Builder
		b.WriteString("version: 1\ntarget: megatron-lm\n")
		if v := pick(r, 0, 1, 2); v > 0 {
			b.WriteString([]string{"", "target_version: 6570\n", "target_version: 2026-08-22\n"}[v])
		}
		encoder := r.IntN(4) > 0
		world := llm
		if encoder {
			world += etp * edp
		}
		fmt.Fprintf(&b, "world_size: %d\nbatch: {micro_batch_size: %d}\n%smodules:\n", world, pick(r, 4, 12), randomTraining(r))
		off := 0
		if encoder {
			fmt.Fprintf(&b, "  - {name: vision, num_ranks: %d, tp: %d, freeze: %t}\n", etp*edp, etp, r.IntN(4) == 0)
			off = etp * edp
		}
		fmt.Fprintf(&b, "  - {name: language, num_ranks: %d, rank_offset: %d, tp: %d, gtp_remat: %d, pp: %d, ep: %d, expt_tp: %d, expt_gtp_remat: %d, num_experts: %d%s}\n",
			llm, off, tp, gtpr, pp, ep, xtp, xgtp, ep*pick(r, 1, 2), randomModel(r, pp)+randomPipeline(r, pp))
		src := b.String()
		l, d := layout.Parse("p.yaml", []byte(src))
		res := validate.Check(l, d)
		if !res.Valid(false) {
			continue
		}
		p, diags, err := launch.Build(res.Topology, launch.Options{LayoutArgs: true, MasterPort: launch.DefaultMasterPort})
		require.NoError(t, err, src)
		if p == nil {
			continue // a plan Megatron-LM would refuse (micro-batch-required)
		}
		require.False(t, diags.HasErrors())
		valid++
		got, err := MegatronLM(p.Node(0).Command, "vision")
		require.NoError(t, err, src)
		same(t, res, check(t, yamlOf(t, got), ""))
		if languageModel(res.Layout) != nil {
			models++
		}
		if res.Layout.Training != nil && len(res.Layout.Training.Stated()) > 1 {
			trainings++
		}
		for _, m := range res.Layout.Modules {
			if m.VPP > 1 || m.Split != (model.Split{}) {
				pipelines++
			}
			if m.Freeze {
				frozen++
			}
		}
	}
	assert.Greater(t, valid, 50, "enough valid layouts drawn")
	assert.Greater(t, models, 25, "enough valid layouts with a model drawn")
	assert.Greater(t, trainings, 25, "enough valid layouts with two training settings or more drawn")
	assert.Greater(t, pipelines, 15, "enough valid layouts with vpp or a split drawn")
	assert.Greater(t, frozen, 25, "enough valid layouts with a frozen module drawn")
}

// randomTraining is a training block drawn from every key of the layout's
// table (each given a quarter of the time, any of its values), or none;
// sequence parallelism is on more often, as an MoE model with tp needs it.
func randomTraining(r *rand.Rand) string {
	var b strings.Builder
	// Megatron-LM's MIMO example starts only with the distributed
	// optimizer (mimo-needs-distributed-optimizer).
	b.WriteString("training:\n  use_distributed_optimizer: true\n")
	stated := map[string]string{}
	for _, k := range layout.TrainingKeys() {
		if k.Name == "use_distributed_optimizer" {
			continue
		}
		// Padding needs a capacity factor and no flex dispatcher
		// (moe-capacity-unsupported): drawn only where it can start.
		if k.Name == "moe_pad_expert_input_to_capacity" && (stated["moe_expert_capacity_factor"] == "" || stated["moe_token_dispatcher_type"] == "flex") {
			continue
		}
		if k.Name == "sequence_parallel" {
			fmt.Fprintf(&b, "  sequence_parallel: %t\n", r.IntN(4) > 0)
			continue
		}
		if r.IntN(4) > 0 {
			continue
		}
		var v string
		switch k.Kind {
		case "bool":
			v = strconv.FormatBool(r.IntN(2) == 0)
		case "int":
			v = strconv.Itoa(1 + r.IntN(2))
		case "float":
			v = []string{"1", "1.25", "2.0"}[r.IntN(3)]
		case "list":
			v = []string{"[core_attn]", "[core_attn, mlp]", "[mlp]"}[r.IntN(3)]
		default:
			v = k.Values[r.IntN(len(k.Values))]
		}
		stated[k.Name] = v
		fmt.Fprintf(&b, "  %s: %s\n", k.Name, v)
	}
	return b.String()
}

// randomPipeline is the language module's freeze, vpp and uneven split,
// or none: ", key: value..." for a flow mapping (a split without a model,
// or one that does not fit it, is refused by validate and not drawn).
func randomPipeline(r *rand.Rand, pp int) string {
	var out string
	if r.IntN(8) == 0 {
		out += ", freeze: true"
	}
	if pp == 1 {
		return out
	}
	switch r.IntN(6) {
	case 0:
		out += ", vpp: 2"
	case 1:
		out += ", decoder_first_pipeline_num_layers: 1"
	case 2:
		out += ", decoder_last_pipeline_num_layers: 1, account_for_loss_in_pipeline_split: true"
	case 3:
		out += ", account_for_embedding_in_pipeline_split: true, account_for_loss_in_pipeline_split: true"
	}
	return out
}

// randomModel is a language model of the keys launch-plan writes, or
// none: ", model: {...}" for a flow mapping.
func randomModel(r *rand.Rand, pp int) string {
	if r.IntN(2) == 0 {
		return ""
	}
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	heads := 8 * (1 + r.IntN(2))
	keys := []string{
		fmt.Sprintf("num_layers: %d", pp*(2+r.IntN(3))),
		fmt.Sprintf("hidden_size: %d", heads*64*(1+r.IntN(2))),
		fmt.Sprintf("num_attention_heads: %d", heads),
		"seq_length: " + pick("1024", "4096"),
		"vocab_size: " + pick("32000", "50257", "0"),
		"swiglu: " + pick("true", "false"),
		"normalization: " + pick("LayerNorm", "RMSNorm"),
		"add_bias_linear: " + pick("true", "false"),
		"untie_embeddings_and_output_weights: " + pick("true", "false"),
		"moe_router_topk: 2",
	}
	for _, k := range []string{"num_query_groups: 4", "ffn_hidden_size: 3072", "kv_channels: 64", "make_vocab_size_divisible_by: 64",
		"moe_ffn_hidden_size: 512", "moe_shared_expert_intermediate_size: 1024", "attention_output_gate: true",
		"moe_layer_freq: " + pick("1", "2"), "moe_router_pre_softmax: true", "moe_router_score_function: " + pick("softmax", "sigmoid")} {
		if r.IntN(2) == 0 {
			keys = append(keys, k)
		}
	}
	if r.IntN(4) == 0 {
		keys = append(keys, "multi_latent_attention: true", "kv_lora_rank: 32", "qk_head_dim: 64", "qk_pos_emb_head_dim: 32", "v_head_dim: 64")
		if r.IntN(2) == 0 {
			keys = append(keys, "q_lora_rank: 64")
		}
	}
	return ", model: {" + strings.Join(keys, ", ") + "}"
}

func yamlOf(t *testing.T, l *Layout) string {
	t.Helper()
	text, err := l.YAML()
	require.NoError(t, err)
	return text
}

// Size products past 2^64 wrapped (--mimo-encoder-dp 4611686018427387905
// x tp 4 gave dp 1, exit 0): both importers refuse any size or product
// past layout.MaxWorldSize.
func TestImportOverflow(t *testing.T) {
	for _, argv := range [][]string{
		{"--mimo-encoder-dp", "4611686018427387905", "--mimo-encoder-tp", "4", "--mimo-llm-tp", "2"},
		{"--mimo-llm-tp", "4294967296", "--mimo-llm-dp", "4294967296"},
		{"--mimo-llm-tp", "2", "--mimo-llm-dp", "16777216"},
		{"--nnodes", "4294967296", "--nproc-per-node", "4294967296", "p.py"},
		{"--mimo-llm-offset", "9223372036854775807"},
	} {
		_, err := MegatronLM(argv, "vision")
		assert.ErrorContains(t, err, "the most a layout allows", argv)
	}
	env := map[string]string{"MIMO_VISION_TP": "4611686018427387905", "MIMO_VISION_PP": "4", "MIMO_VISION_DP": "1", "MIMO_VISION_OFFSET": "0",
		"MIMO_LANGUAGE_TP": "1", "MIMO_LANGUAGE_PP": "1", "MIMO_LANGUAGE_DP": "4", "MIMO_LANGUAGE_OFFSET": "4"}
	_, err := BridgeEnv(env)
	assert.ErrorContains(t, err, "MIMO_VISION_TP x _PP x _DP is more than 16777216")
	env["MIMO_VISION_TP"], env["MIMO_LANGUAGE_OFFSET"] = "1", "9223372036854775807"
	_, err = BridgeEnv(env)
	assert.ErrorContains(t, err, "MIMO_LANGUAGE_OFFSET 9223372036854775807 is more than 16777216")
}

func TestTopologyEnv(t *testing.T) {
	got, err := topologyEnv([]byte(`{"version":1,"env":{"Z":"1","A":"x:y"},"modules":[]}`))
	require.NoError(t, err)
	assert.Equal(t, []layout.EnvVar{{Name: "Z", Value: "1"}, {Name: "A", Value: "x:y"}}, got, "the topology's order")
	got, err = topologyEnv([]byte(`{"version":1,"modules":[]}`))
	require.NoError(t, err)
	assert.Empty(t, got)
	for _, bad := range []string{`{"env":[1]}`, `{"env":{"A":1}}`, `{"env":`} {
		_, err = topologyEnv([]byte(bad))
		assert.ErrorContains(t, err, "the plan's topology", bad)
	}
}

func TestTopologyTraining(t *testing.T) {
	got, err := topologyTraining([]byte(`{"version":1,"training":{"fp8":"e4m3","use_distributed_optimizer":true,"zz":1},"modules":[]}`))
	require.NoError(t, err)
	assert.Equal(t, []Setting{{"use_distributed_optimizer", "true"}, {"fp8", `"e4m3"`}, {"zz", "1"}}, got, "layout order, an unknown key last")
	got, err = topologyTraining([]byte(`{"version":1,"modules":[]}`))
	require.NoError(t, err)
	assert.Empty(t, got)
	_, err = topologyTraining([]byte(`{"version":`))
	assert.ErrorContains(t, err, "the plan's topology")
	// An unknown key reaches validate, which names it.
	l := &Layout{Target: "megatron-bridge", WorldSize: 4, Training: []Setting{{"zz", "1"}},
		Modules: []Module{{Name: "language", NumRanks: 4, TP: 1, GTPRemat: 1, CP: 1, PP: 1, EP: 1, ExptTP: 1, ExptGTPRemat: 1}}}
	_, res, err := l.Check("imported.yaml")
	require.NoError(t, err)
	assert.False(t, res.Valid(false))
}

// linesReader streams n lines of text, each appended by line to a reused
// buffer as it is read: the reader itself allocates nothing per line.
type linesReader struct {
	n    int
	line func(dst []byte, i int) []byte
	buf  []byte
	rest []byte
}

func (r *linesReader) Read(p []byte) (int, error) {
	for len(r.rest) == 0 {
		if r.n == 0 {
			return 0, io.EOF
		}
		r.n--
		r.buf = r.line(r.buf[:0], r.n)
		r.rest = r.buf
	}
	k := copy(p, r.rest)
	r.rest = r.rest[k:]
	return k, nil
}

// import bridge-env --from-script on a 175 MB script took 1.12 GB (every
// variable of the script kept): it keeps only the MIMO_* ones, skips the
// other lines unparsed, and refuses a topology here-document larger than
// launch-plan writes.
func TestBridgeSourceBounded(t *testing.T) {
	mimo := "export MIMO_LLM_TP=2 MIMO_LLM_PP=1 MIMO_LLM_DP=2 MIMO_LLM_OFFSET=0\n"
	pad := strings.Repeat("x", 40)
	r := &linesReader{n: 1_000_000, line: func(dst []byte, i int) []byte {
		if i == 500_000 {
			return append(dst, mimo...)
		}
		dst = strconv.AppendInt(append(dst, "export VAR_"...), int64(i), 10)
		return append(append(append(dst, '='), pad...), '\n')
	}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	env, topology, err := readScript(r, "MIMO_")
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Nil(t, topology)
	assert.Equal(t, map[string]string{"MIMO_LLM_TP": "2", "MIMO_LLM_PP": "1", "MIMO_LLM_DP": "2", "MIMO_LLM_OFFSET": "0"}, env)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "a 58 MB script")

	doc := &linesReader{n: 1_000_002, line: func(dst []byte, i int) []byte {
		switch i {
		case 1_000_001:
			return append(dst, "cat >t.json <<'"+topologyHeredoc+"'\n"...)
		case 0:
			return append(dst, topologyHeredoc+"\n"...)
		}
		return append(append(dst, pad...), '\n')
	}}
	_, _, err = readScript(doc, "MIMO_")
	assert.ErrorContains(t, err, "here-document is larger than")
}

// TestTrainingMainGradsDtype: --main-grads-dtype bf16 reads back with the
// bf16 reduction Megatron-LM then runs (arguments.py:1215-1217), unless
// --accumulate-allreduce-grads-in-fp32 asks for fp32 (which Megatron-LM
// refuses beside bf16 main gradients, and validate does too).
func TestTrainingMainGradsDtype(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		vals  map[string]string
		want  []Setting
	}{
		{nil, map[string]string{"--main-grads-dtype": "bf16"},
			[]Setting{{"grad_reduce_in_fp32", "false"}, {"main_grads_dtype", `"bf16"`}}},
		{[]string{"--accumulate-allreduce-grads-in-fp32"}, map[string]string{"--main-grads-dtype": "bf16"},
			[]Setting{{"grad_reduce_in_fp32", "true"}, {"main_grads_dtype", `"bf16"`}}},
		{[]string{"--use-precision-aware-optimizer"}, map[string]string{"--main-grads-dtype": "fp32", "--exp-avg-dtype": "fp8"},
			[]Setting{{"use_precision_aware_optimizer", "true"}, {"main_grads_dtype", `"fp32"`}, {"exp_avg_dtype", `"fp8"`}}},
	} {
		a := &args{vals: tc.vals, flags: map[string]bool{}}
		for _, f := range tc.flags {
			a.flags[f] = true
		}
		assert.Equal(t, tc.want, a.training(), "%v %v", tc.flags, tc.vals)
	}
}
