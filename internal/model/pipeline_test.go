package model

import (
	"math/rand/v2"
	"testing"

	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pipelineCase is one case of testdata/pipeline-megatron.json, written by
// scripts/gen-pipeline-fixtures.py from Megatron-LM's own checks: the
// upstream line of the first check that fails, or the decoder layers of
// every (pp rank, virtual stage).
type pipelineCase struct {
	NumLayers        int     `json:"num_layers"`
	MTPNumLayers     *int    `json:"mtp_num_layers"`
	PP               int     `json:"pp"`
	VPP              *int    `json:"vpp"`
	First            *int    `json:"first"`
	Last             *int    `json:"last"`
	AccountEmbedding bool    `json:"account_for_embedding"`
	AccountLoss      bool    `json:"account_for_loss"`
	Layout           *string `json:"layout"`
	Error            string  `json:"error"`
	Chunks           [][]int `json:"chunks"`
}

func (c pipelineCase) parallel() (layers, mtp int, p Parallel) {
	deref := func(v *int) int {
		if v == nil {
			return 0
		}
		return *v
	}
	p = Parallel{PP: c.PP, VPP: deref(c.VPP), Split: Split{
		First: deref(c.First), Last: deref(c.Last),
		AccountEmbedding: c.AccountEmbedding, AccountLoss: c.AccountLoss,
	}}
	if c.Layout != nil {
		p.Split.Layout = *c.Layout
	}
	return c.NumLayers, deref(c.MTPNumLayers), p
}

// TestPipelineSplitMatchesMegatron: on every fixture case mimoplan refuses
// what upstream refuses, at upstream's line, and otherwise builds the same
// layers on every stage.
func TestPipelineSplitMatchesMegatron(t *testing.T) {
	var f struct {
		Cases []pipelineCase `json:"cases"`
	}
	testutil.LoadMegatron(t, "testdata/pipeline-megatron.json", &f)
	require.Greater(t, len(f.Cases), 1000)
	refused := 0
	for i, c := range f.Cases {
		layers, mtp, p := c.parallel()
		errs, chunks := checkSplit(layers, mtp, p)
		if c.Error != "" {
			refused++
			if assert.Len(t, errs, 1, "case %d %+v: upstream refuses at %s", i, c, c.Error) {
				assert.Equal(t, c.Error, errs[0].src, "case %d %+v: %s", i, c, errs[0].msg)
			}
			continue
		}
		assert.Empty(t, errs, "case %d %+v", i, c)
		assert.Equal(t, c.Chunks, chunks, "case %d %+v", i, c)
	}
	assert.Positive(t, refused)
	assert.Less(t, refused, len(f.Cases))
}

// TestStageLayersSumToModel: on random splits that pass, the stages hold
// num_layers between them, or Check says they do not
// (pipeline-split-layers-mismatch, pp 1 with both ends given).
func TestStageLayersSumToModel(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	for range 5000 {
		cfg := Config{NumLayers: 1 + r.IntN(130), HiddenSize: 1024, NumAttentionHeads: 8, SeqLength: 4096}
		p := Parallel{PP: 1 + r.IntN(16)}
		if r.IntN(4) == 0 {
			p.VPP = 2 + r.IntN(3)
		}
		switch r.IntN(3) {
		case 0:
			p.Split.First = r.IntN(cfg.NumLayers/p.PP + 3)
			p.Split.Last = r.IntN(cfg.NumLayers/p.PP + 3)
		case 1:
			p.Split.AccountEmbedding, p.Split.AccountLoss = r.IntN(2) == 0, r.IntN(2) == 0
		}
		stages := StageLayers(cfg, p)
		var rules []string
		for _, v := range Check(cfg, p, Training{}) {
			rules = append(rules, v.Rule)
		}
		if stages == nil {
			assert.NotEmpty(t, rules, "%+v", p)
			continue
		}
		sum := 0
		for _, n := range stages {
			sum += n
		}
		if sum != cfg.NumLayers {
			assert.Contains(t, rules, RuleSplitLayersMismatch, "%+v: %v", p, stages)
		} else {
			assert.NotContains(t, rules, RuleSplitLayersMismatch)
		}
	}
}

func TestParseLayout(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "Et*3|(tt|)*2,tL", want: []string{"Ettt", "tt", "tt", "tL"}},
		{in: "Ettt|(tt|)*29,m|L", want: append(append([]string{"Ettt"}, repeat("tt", 29)...), "m", "L")},
		{in: "E|t*0|L", want: []string{"E", "", "L"}},
		{in: "Ex|L", bad: true},
		{in: "E(t*2|)*99999999999|L", bad: true},
		{in: "Et*2000000L", bad: true},
	} {
		got, err := parseLayout(tc.in)
		if tc.bad {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
