package launch

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// threeModule is the worked example of docs/launch.md: vision on node 0,
// audio on node 1, the language model (pp 2) on nodes 2 and 3.
const threeModule = `version: 1
name: three-module-4node
target: core
cluster:
  nodes: 4
  gpus_per_node: 8
batch:
  micro_batch_size: 4
  global_batch_size: 64
modules:
  - {name: vision, num_ranks: 8, tp: 2}
  - {name: audio, num_ranks: 8, tp: 1}
  - {name: language, num_ranks: 16, tp: 4, pp: 2}
`

const nemotron = `version: 1
name: nemotron-vlm-8gpu
target: megatron-lm
cluster: {nodes: 1, gpus_per_node: 8}
batch: {micro_batch_size: 1, global_batch_size: 8}
modules:
  - {name: vision, num_ranks: 4, rank_offset: 0, tp: 2}
  - {name: language, num_ranks: 4, rank_offset: 4, tp: 2, ep: 4, expt_tp: 1, num_experts: 128}
training: {use_distributed_optimizer: true}
`

const llmOnly = `version: 1
name: llm-only
target: megatron-lm
cluster: {nodes: 2, gpus_per_node: 8}
batch: {micro_batch_size: 1, global_batch_size: 64}
modules:
  - {name: language, num_ranks: 16, tp: 2, pp: 2, ep: 4}
training: {use_distributed_optimizer: true}
`

var hosts4 = []string{"h0", "h1", "h2", "h3"}

func check(t testing.TB, src string) *topo.Topology {
	t.Helper()
	l, d := layout.Parse("layout.yaml", []byte(src))
	res := validate.Check(l, d)
	var b strings.Builder
	require.NoError(t, diag.WriteText(&b, res.Diags))
	require.True(t, res.Valid(false), "layout is invalid:\n%s", b.String())
	return res.Topology
}

func build(t *testing.T, src string, o Options) *Plan {
	t.Helper()
	if o.MasterPort == 0 {
		o.MasterPort = DefaultMasterPort
	}
	p, d, err := Build(check(t, src), o)
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, diag.WriteText(&b, d))
	require.NotNil(t, p, "diagnostics:\n%s", b.String())
	return p
}

func TestArgv(t *testing.T) {
	tests := []struct {
		name string
		src  string
		o    Options
		want [][]string
	}{
		{
			name: "one node, megatron-lm defaults",
			src:  nemotron,
			o:    Options{LayoutArgs: true},
			want: [][]string{{"torchrun", "--nnodes=1", "--nproc-per-node=8", "--node-rank=0", "--master-addr=localhost", "--master-port=29500",
				"examples/mimo/pretrain_mimo.py",
				"--mimo-encoder-tp", "2", "--mimo-encoder-dp", "2", "--mimo-llm-offset", "4", "--mimo-llm-tp", "2", "--mimo-llm-cp", "1",
				"--mimo-llm-pp", "1", "--mimo-llm-dp", "2", "--mimo-llm-ep", "4", "--mimo-llm-expt-tp", "1", "--num-experts", "128",
				"--micro-batch-size", "1", "--global-batch-size", "8", "--use-distributed-optimizer"}},
		},
		{
			name: "four nodes, static",
			src:  threeModule,
			o:    Options{Hosts: hosts4, Program: []string{"train.py", "--lr", "1e-4"}},
			want: func() [][]string {
				var out [][]string
				for i := range 4 {
					out = append(out, []string{"torchrun", "--nnodes=4", "--nproc-per-node=8",
						"--node-rank=" + string(rune('0'+i)), "--master-addr=h0", "--master-port=29500", "train.py", "--lr", "1e-4"})
				}
				return out
			}(),
		},
		{
			name: "four nodes, c10d on a given master and port",
			src:  threeModule,
			o:    Options{Hosts: hosts4, MasterAddr: "10.0.0.1", MasterPort: 6000, Rendezvous: C10d, Program: []string{"train.py"}},
			want: func() [][]string {
				cmd := []string{"torchrun", "--nnodes=4", "--nproc-per-node=8", "--rdzv-backend=c10d",
					"--rdzv-endpoint=10.0.0.1:6000", "--rdzv-id=three-module-4node", "train.py"}
				return [][]string{cmd, cmd, cmd, cmd}
			}(),
		},
		{
			name: "c10d on an IPv6 master",
			src:  threeModule,
			o:    Options{Hosts: []string{"fd00::1", "fd00::2", "fd00::3", "fd00::4"}, Rendezvous: C10d, RendezvousID: "job7", Program: []string{"train.py"}},
			want: func() [][]string {
				cmd := []string{"torchrun", "--nnodes=4", "--nproc-per-node=8", "--rdzv-backend=c10d",
					"--rdzv-endpoint=[fd00::1]:29500", "--rdzv-id=job7", "train.py"}
				return [][]string{cmd, cmd, cmd, cmd}
			}(),
		},
		{
			name: "entrypoint and layout arguments off",
			src:  nemotron,
			o:    Options{Entrypoint: []string{"python", "-m", "torch.distributed.run"}, Program: []string{"preflight.py", "--plan", "plan.json"}},
			want: [][]string{{"python", "-m", "torch.distributed.run", "--nnodes=1", "--nproc-per-node=8", "--node-rank=0",
				"--master-addr=localhost", "--master-port=29500", "preflight.py", "--plan", "plan.json"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build(t, tt.src, tt.o)
			require.Equal(t, len(tt.want), p.NNodes)
			for i, n := range p.Nodes() {
				assert.Equal(t, tt.want[i], n.Command, "node %d", i)
			}
		})
	}
}

func TestRankRanges(t *testing.T) {
	span := func(name string, a, b int) ModuleSpan { return ModuleSpan{Name: name, FirstRank: a, LastRank: b} }
	tests := []struct {
		name  string
		src   string
		hosts []string
		want  []Node
	}{
		{
			name:  "three modules on four nodes",
			src:   threeModule,
			hosts: hosts4,
			want: []Node{
				{NodeRank: 0, Host: "h0", FirstRank: 0, LastRank: 7, Modules: []ModuleSpan{span("vision", 0, 7)}},
				{NodeRank: 1, Host: "h1", FirstRank: 8, LastRank: 15, Modules: []ModuleSpan{span("audio", 8, 15)}},
				{NodeRank: 2, Host: "h2", FirstRank: 16, LastRank: 23, Modules: []ModuleSpan{span("language", 16, 23)}},
				{NodeRank: 3, Host: "h3", FirstRank: 24, LastRank: 31, Modules: []ModuleSpan{span("language", 24, 31)}},
			},
		},
		{
			name: "a module boundary inside a node",
			src: `version: 1
cluster: {nodes: 2, gpus_per_node: 4}
modules:
  - {name: vision, num_ranks: 6, tp: 2}
  - {name: language, num_ranks: 2, tp: 2}
`,
			hosts: []string{"a", "b"},
			want: []Node{
				{NodeRank: 0, Host: "a", FirstRank: 0, LastRank: 3, Modules: []ModuleSpan{span("vision", 0, 3)}},
				{NodeRank: 1, Host: "b", FirstRank: 4, LastRank: 7, Modules: []ModuleSpan{span("vision", 4, 5), span("language", 6, 7)}},
			},
		},
		{
			name: "colocated",
			src: `version: 1
cluster: {nodes: 2, gpus_per_node: 4}
modules:
  - {name: vision, num_ranks: 8, rank_offset: 0, tp: 2}
  - {name: language, num_ranks: 8, rank_offset: 0, tp: 4}
`,
			hosts: []string{"a", "b"},
			want: []Node{
				{NodeRank: 0, Host: "a", FirstRank: 0, LastRank: 3, Modules: []ModuleSpan{span("vision", 0, 3), span("language", 0, 3)}},
				{NodeRank: 1, Host: "b", FirstRank: 4, LastRank: 7, Modules: []ModuleSpan{span("vision", 4, 7), span("language", 4, 7)}},
			},
		},
		{
			name: "no cluster: one node of world_size GPUs on localhost",
			src:  "version: 1\nworld_size: 8\nmodules:\n- {name: vision, num_ranks: 4, tp: 2}\n- {name: language, num_ranks: 4, tp: 2}\n",
			want: []Node{
				{NodeRank: 0, Host: "localhost", FirstRank: 0, LastRank: 7, Modules: []ModuleSpan{span("vision", 0, 3), span("language", 4, 7)}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build(t, tt.src, Options{Hosts: tt.hosts, Program: []string{"train.py"}})
			var got []Node
			for _, n := range p.Nodes() {
				n.Command = nil
				got = append(got, n)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRefusals(t *testing.T) {
	type want struct {
		rule string
		line int
		msg  string
	}
	tests := []struct {
		name string
		src  string
		o    Options
		want []want
	}{
		{"too few hosts", threeModule, Options{Hosts: hosts4[:3]},
			[]want{{"host-count-mismatch", 5, "--hosts gives 3 host(s), but cluster.nodes is 4"}}},
		{"too many hosts, no cluster", "version: 1\nworld_size: 2\nmodules:\n- {name: language, num_ranks: 2}\n", Options{Hosts: []string{"a", "b"}},
			[]want{{"host-count-mismatch", 0, "runs on 1 node"}}},
		{"localhost master", threeModule, Options{Hosts: []string{"localhost", "h1", "h2", "h3"}},
			[]want{{"loopback-rendezvous", 0, `"localhost"`}}},
		{"127.x master", threeModule, Options{Hosts: hosts4, MasterAddr: "127.0.1.1"},
			[]want{{"loopback-rendezvous", 0, `"127.0.1.1"`}}},
		{"::1 master", threeModule, Options{Hosts: hosts4, MasterAddr: "[::1]"},
			[]want{{"loopback-rendezvous", 0, `"[::1]"`}}},
		{"unspecified master", threeModule, Options{Hosts: hosts4, MasterAddr: "0.0.0.0", Rendezvous: C10d},
			[]want{{"loopback-rendezvous", 0, "cannot reach"}}},
		{"duplicate host", threeModule, Options{Hosts: []string{"h0", "h1", "H0", "h3"}, HostSource: "hosts.txt", HostLines: []int{1, 2, 4, 5}},
			[]want{{"duplicate-host", 0, `"H0" is node 0 (hosts.txt:1) and again node 2 (hosts.txt:4)`}}},
		{"duplicate in --hosts", threeModule, Options{Hosts: []string{"h0", "h1", "h1", "h3"}},
			[]want{{"duplicate-host", 0, `"h1" is node 1 and again node 2 (--hosts)`}}},
		{"127.1 is 127.0.0.1", threeModule, Options{Hosts: []string{"127.1", "h1", "h2", "h3"}},
			[]want{{"loopback-rendezvous", 0, `"127.1"`}}},
		{"duplicate address, two spellings", threeModule, Options{Hosts: []string{"10.0.0.1", "10.0.0.2", "10.1", "fd00::1"}},
			[]want{{"duplicate-host", 0, `"10.1" is node 0 and again node 2 (--hosts)`}}},
		{"duplicate IPv6, bracketed", threeModule, Options{Hosts: []string{"fd00::1", "[FD00::1]", "h2", "h3"}},
			[]want{{"duplicate-host", 0, `"[FD00::1]" is node 0 and again node 1`}}},
		{"static master on another node", threeModule, Options{Hosts: hosts4, MasterAddr: "H2"},
			[]want{{"master-not-first-host", 0, `master address "H2" is node 2 (--hosts), but with static rendezvous node rank 0, h0, serves`}}},
		{"static master on another node, hostfile lines", threeModule, Options{Hosts: hosts4, MasterAddr: "h3", HostSource: "hosts.txt", HostLines: []int{2, 3, 4, 7}},
			[]want{{"master-not-first-host", 0, `is node 3 (hosts.txt:7)`}}},
		{"port 0", threeModule, Options{Hosts: hosts4, MasterPort: -1},
			[]want{{"invalid-port", 0, "-1"}}},
		{"port too high", threeModule, Options{Hosts: hosts4, MasterPort: 65536},
			[]want{{"invalid-port", 0, "65536"}}},
		{"port as text: not a number", threeModule, Options{Hosts: hosts4, MasterPortText: "abc"},
			[]want{{"invalid-port", 0, `master port "abc" is not a number in 1-65535`}}},
		{"port as text: hex is not decimal", threeModule, Options{Hosts: hosts4, MasterPortText: "0x1f90"},
			[]want{{"invalid-port", 0, `"0x1f90" is not a number`}}},
		{"port as text: a sign is not a digit", threeModule, Options{Hosts: hosts4, MasterPortText: "+6000"},
			[]want{{"invalid-port", 0, `"+6000" is not a number`}}},
		{"port as text: blank", threeModule, Options{Hosts: hosts4, MasterPortText: " "},
			[]want{{"invalid-port", 0, `" " is not a number`}}},
		{"port as text: negative", threeModule, Options{Hosts: hosts4, MasterPortText: "-1"},
			[]want{{"invalid-port", 0, "master port -1 is outside 1-65535"}}},
		{"port as text: 0", threeModule, Options{Hosts: hosts4, MasterPortText: "0"},
			[]want{{"invalid-port", 0, "master port 0 is outside 1-65535"}}},
		{"port as text: 65536", threeModule, Options{Hosts: hosts4, MasterPortText: "65536"},
			[]want{{"invalid-port", 0, "master port 65536 is outside 1-65535"}}},
		{"port as text: beyond int", threeModule, Options{Hosts: hosts4, MasterPortText: "99999999999999999999"},
			[]want{{"invalid-port", 0, "master port 99999999999999999999 is outside"}}},
		{"everything at once", threeModule, Options{Hosts: []string{"localhost", "localhost"}, MasterPort: 70000},
			[]want{{"host-count-mismatch", 5, ""}, {"loopback-rendezvous", 0, ""}, {"duplicate-host", 0, ""}, {"invalid-port", 0, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.o.MasterPort == 0 {
				tt.o.MasterPort = DefaultMasterPort
			}
			if tt.o.HostSource == "" {
				tt.o.HostSource = "--hosts"
			}
			tt.o.Program = []string{"train.py"}
			p, d, err := Build(check(t, tt.src), tt.o)
			require.NoError(t, err)
			assert.Nil(t, p)
			require.NotNil(t, d)
			assert.Equal(t, "layout.yaml", d.File)
			var got []string
			for _, it := range d.Items {
				got = append(got, it.Rule)
			}
			var rules []string
			for _, w := range tt.want {
				rules = append(rules, w.rule)
			}
			assert.ElementsMatch(t, rules, got)
			for _, w := range tt.want {
				for _, it := range d.Items {
					if it.Rule == w.rule {
						assert.Equal(t, diag.Error, it.Severity)
						assert.Equal(t, w.line, it.Line, w.rule)
						assert.Contains(t, it.Message, w.msg)
						assert.NotEmpty(t, it.Hint)
					}
				}
			}
		})
	}
}

func TestMasterPortText(t *testing.T) {
	for text, want := range map[string]int{"6000": 6000, " 6000 ": 6000, "010": 10, "1": 1, "65535": 65535, "0029500": 29500} {
		p := build(t, threeModule, Options{Hosts: hosts4, Program: []string{"x"}, MasterPort: 1, MasterPortText: text})
		assert.Equal(t, want, p.Rendezvous.MasterPort, "%q", text)
		assert.Contains(t, p.Node(1).Command, "--master-port="+strconv.Itoa(want), "%q", text)
	}
}

func TestMasterAddr(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"another name of the first host", Options{Hosts: hosts4, MasterAddr: "10.0.0.1"}, "10.0.0.1"},
		{"the first host itself", Options{Hosts: hosts4, MasterAddr: "H0"}, "H0"},
		{"c10d may meet on any node", Options{Hosts: hosts4, MasterAddr: "h2", Rendezvous: C10d}, "h2"},
		{"no hosts: the scheduler's", Options{MasterAddr: "h2"}, "h2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Program = []string{"x"}
			p := build(t, threeModule, tt.o)
			assert.Equal(t, tt.want, p.Rendezvous.MasterAddr)
		})
	}
}

func TestLoopbackOnOneNode(t *testing.T) {
	p := build(t, nemotron, Options{Hosts: []string{"127.0.0.1"}, LayoutArgs: true})
	assert.Equal(t, "127.0.0.1", p.Rendezvous.MasterAddr)
}

func TestIsLoopback(t *testing.T) {
	for h, want := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "localhost.localdomain": true, "foo.localhost": true, "ip6-localhost": true,
		"localhost6": true, "localhost6.localdomain6": true, "localhost4": true,
		"127.0.0.1": true, "127.255.0.9": true, "::1": true, "[::1]": true, "0:0:0:0:0:0:0:1": true, "[0:0:0:0:0:0:0:1]": true,
		"0.0.0.0": true, "::": true, "::1%lo": true, "::ffff:127.0.0.1": true,
		// inet_aton's short, octal and hex forms, which getaddrinfo accepts
		"127.1": true, "127.0.1": true, "2130706433": true, "0x7f000001": true, "0177.0.0.1": true, "0x7f.1": true, "0": true,
		"h0": false, "10.0.0.1": false, "fd00::1": false, "localhost-2": false, "128.0.0.1": false, "10.1": false, "0x7g.0.0.1": false,
		"127.0.0.1.5": false, "1.2.3.256": false, "1.16777216": false,
	} {
		assert.Equal(t, want, isLoopback(h), h)
	}
}

func TestHostKey(t *testing.T) {
	same := [][]string{
		{"Node0", "node0", "NODE0."},
		{"10.0.0.1", "10.0.0.01", "10.1", "167772161", "0xa000001", "10.0.1"},
		{"fd00::1", "[fd00::1]", "FD00:0:0::1", "fd00:0000::0001"},
		{"fe80::1%eth0", "[fe80::1%eth0]"},
	}
	for _, group := range same {
		for _, h := range group[1:] {
			assert.Equal(t, hostKey(group[0]), hostKey(h), "%s and %s", group[0], h)
		}
	}
	for _, pair := range [][2]string{{"node0", "node1"}, {"10.0.0.1", "10.0.0.10"}, {"fe80::1%eth0", "fe80::1%eth1"}, {"0x1", "0x1.example"}} {
		assert.NotEqual(t, hostKey(pair[0]), hostKey(pair[1]), "%s and %s", pair[0], pair[1])
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		o    Options
		want string
	}{
		{"no program for core", threeModule, Options{Hosts: hosts4}, "target core has no default program"},
		{"unknown rendezvous", threeModule, Options{Hosts: hosts4, Program: []string{"x"}, Rendezvous: "etcd"}, `unknown rendezvous backend "etcd"`},
		{"host with a space", threeModule, Options{Hosts: []string{"h0", "h 1", "h2", "h3"}, HostSource: "--hosts", Program: []string{"x"}}, `--hosts: host 1 "h 1"`},
		{"host with a quote", threeModule, Options{Hosts: []string{"h0'", "h1", "h2", "h3"}, Program: []string{"x"}}, "is not a host name"},
		{"master with a newline", threeModule, Options{Hosts: hosts4, MasterAddr: "h0\nrm", Program: []string{"x"}}, "master address"},
		{"host like an option", threeModule, Options{Hosts: []string{"h0", "-oBatchMode", "h2", "h3"}, HostSource: "--hosts", Program: []string{"x"}}, `--hosts: host 1 "-oBatchMode"`},
		{"master with a zone", threeModule, Options{Hosts: hosts4, MasterAddr: "fe80::1%eth0", Program: []string{"x"}}, `master address "fe80::1%eth0" has an IPv6 zone`},
		{"first host with a zone", threeModule, Options{Hosts: []string{"[fe80::1%eth0]", "h1", "h2", "h3"}, Program: []string{"x"}}, "give one without (--master-addr)"},
		{"bad env name", threeModule, Options{Hosts: hosts4, Program: []string{"x"}, Env: []EnvVar{{"A-B", "1"}}}, `"A-B" is not a valid name`},
		{"env the sh plan's node rank", threeModule, Options{Hosts: hosts4, Program: []string{"x"}, Env: []EnvVar{{"node_rank", "7"}}}, "node_rank is the plan's own"},
		{"env the slurm plan's node name", threeModule, Options{Hosts: hosts4, Program: []string{"x"}, Env: []EnvVar{{"SLURMD_NODENAME", "n0"}}}, "SLURMD_NODENAME is the plan's own"},
		{"env the sh plan's NODE_RANK", threeModule, Options{Hosts: hosts4, Program: []string{"x"}, Env: []EnvVar{{"NODE_RANK", "0"}}}, "NODE_RANK is the plan's own"},
		{"env torchrun sets", threeModule, Options{Hosts: hosts4, Program: []string{"x"}, Env: []EnvVar{{"NCCL_DEBUG", "INFO"}, {"LOCAL_RANK", "0"}}}, "LOCAL_RANK is set by torchrun for every worker"},
		{"NUL in an argument", threeModule, Options{Hosts: hosts4, Program: []string{"x", "a\x00b"}}, "NUL"},
		{"layout flag given twice", nemotron, Options{LayoutArgs: true, Program: []string{"p.py", "--mimo-llm-tp=4", "--micro-batch-size", "2"}}, "already set --mimo-llm-tp, --micro-batch-size"},
		{"num_experts given twice", nemotron, Options{LayoutArgs: true, Program: []string{"p.py", "--num-experts", "64"}}, "already set --num-experts"},
		{"GTP shards the layout does not have", nemotron, Options{LayoutArgs: true, Program: []string{"p.py", "--tensor-parallel-num-weight-shards=4"}}, "already set --tensor-parallel-num-weight-shards"},
		{"--llm-only beside an encoder", nemotron, Options{LayoutArgs: true, Program: []string{"p.py", "--mimo-llm-only"}}, "already set --mimo-llm-only"},
		{"plain layout flag given twice", at(nemotron, "6570"), Options{LayoutArgs: true, Program: []string{"p.py", "--llm-only"}}, "already set --llm-only"},
		{"--mimo-* names before PR #6894", at(nemotron, "2026-08-22"), Options{LayoutArgs: true, Program: []string{"p.py", "--mimo-llm-tp", "2", "--mimo-encoder-dp=1"}},
			"use --mimo-encoder-dp, --mimo-llm-tp, but target version 2026-08-22 names the grid arguments before Megatron-LM PR #6894 (--llm-tp...)"},
		{"plain names since PR #6894", nemotron, Options{LayoutArgs: true, Program: []string{"p.py", "--llm-ep", "2"}},
			"use --llm-ep, but target version newest"},
		{"arguments without a program", nemotron, Options{LayoutArgs: true, Program: []string{"--lr", "1e-4"}}, `the first word after -- is the program to run, but "--lr" is an option`},
		{"arguments without a program, core", threeModule, Options{Hosts: hosts4, Program: []string{"-x"}}, `"-x" is an option`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.MasterPort = DefaultMasterPort
			p, d, err := Build(check(t, tt.src), tt.o)
			require.Error(t, err)
			assert.Nil(t, p)
			assert.Nil(t, d)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, _, err := Build(nil, Options{})
	assert.Error(t, err, "no topology")
}

func TestNoHostsForScheduler(t *testing.T) {
	p := build(t, threeModule, Options{Program: []string{"train.py"}})
	assert.False(t, p.HostsGiven)
	for _, n := range p.Nodes() {
		assert.Empty(t, n.Host)
		assert.Nil(t, n.Command)
	}
	for _, write := range []func(*strings.Builder, *Plan) error{
		func(b *strings.Builder, p *Plan) error { return WriteSh(b, p) },
		func(b *strings.Builder, p *Plan) error { return WriteJSON(b, p) },
	} {
		var b strings.Builder
		assert.ErrorIs(t, write(&b, p), errNoHosts)
	}
}

func TestEnv(t *testing.T) {
	p := build(t, threeModule, Options{
		Hosts: hosts4, Program: []string{"train.py"}, OMPThreads: 4, TopologyPath: "/shared/t.json",
		Env: []EnvVar{{"NCCL_DEBUG", "INFO"}, {"CUDA_DEVICE_ORDER", "FASTEST_FIRST"}, {"NCCL_DEBUG", "WARN"}},
	})
	assert.Equal(t, []EnvVar{
		{"CUDA_DEVICE_ORDER", "FASTEST_FIRST"},
		{"OMP_NUM_THREADS", "4"},
		{"MIMOPLAN_TOPOLOGY", "/shared/t.json"},
		{"NCCL_DEBUG", "WARN"},
	}, p.Env)
	p = build(t, threeModule, Options{Hosts: hosts4, Program: []string{"train.py"}})
	assert.Equal(t, []EnvVar{{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"OMP_NUM_THREADS", "1"}}, p.Env)
}

func TestC10dNote(t *testing.T) {
	p := build(t, threeModule, Options{Hosts: hosts4, Program: []string{"train.py"}, Rendezvous: C10d})
	require.Len(t, p.Notes, 1)
	assert.Contains(t, p.Notes[0], "not fixed")
	p = build(t, threeModule, Options{Hosts: hosts4, Program: []string{"train.py"}})
	assert.Empty(t, p.Notes)
}

// TestTopologyJSON: the topology a plan carries is the layout's modules,
// one a line, and is passed for every target but megatron-lm with its
// layout arguments.
func TestTopologyJSON(t *testing.T) {
	p := build(t, threeModule, Options{Hosts: hosts4, Program: []string{"train.py"}})
	assert.True(t, p.PassTopology)
	var tj topologyJSON
	require.NoError(t, json.Unmarshal(p.Topology, &tj))
	assert.Equal(t, "three-module-4node", tj.Name)
	assert.Equal(t, 32, tj.WorldSize)
	require.Len(t, tj.Modules, 3)
	assert.Equal(t, topologyModule{Name: "language", RankOffset: 16, NumRanks: 16, TP: 4, GTPRemat: 1, CP: 1, PP: 2, DP: 2,
		EP: 1, ExptTP: 1, ExptGTPRemat: 1, ExptDP: 8}, tj.Modules[2])
	assert.Equal(t, 5, strings.Count(string(p.Topology), "\n"), "one module a line")

	p = build(t, nemotron, Options{LayoutArgs: true})
	assert.False(t, p.PassTopology, "megatron-lm reads its arguments")
	assert.NotEmpty(t, p.Topology, "megatron-specs still has it")
	p = build(t, nemotron, Options{LayoutArgs: true, TopologyPath: "/shared/t.json"})
	assert.True(t, p.PassTopology, "--topology-out asks for it")
	p = build(t, nemotron, Options{})
	assert.True(t, p.PassTopology, "no layout arguments: the topology instead")
}
