package launch

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type bridgeModule struct {
	TP     int  `json:"tensor_model_parallel_size"`
	PP     int  `json:"pipeline_model_parallel_size"`
	CP     int  `json:"context_parallel_size"`
	EP     int  `json:"expert_model_parallel_size"`
	ExptTP int  `json:"expert_tensor_parallel_size"`
	DP     *int `json:"data_parallel_size"`
	Offset int  `json:"rank_offset"`
	Total  int  `json:"total_ranks"`
	ExptDP int  `json:"expert_data_parallel_size"`
}

// TestBridgeFixture: the Python --format bridge prints is the one
// Megatron-Bridge's own finalize() accepted (scripts/gen-bridge-fixtures.py,
// testdata/megatron-bridge/finalize.json), and what finalize() made of it
// is the layout's grid; so is what the llava example made of the MIMO_*
// variables, where they can carry the layout.
func TestBridgeFixture(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "megatron-bridge", "finalize.json"))
	require.NoError(t, err)
	var fx struct {
		Bridge string `json:"megatron_bridge_mirror"`
		Cases  []struct {
			Name       string                  `json:"name"`
			LayoutText string                  `json:"layout_text"`
			Python     string                  `json:"python"`
			WorldSize  int                     `json:"world_size"`
			Finalized  map[string]bridgeModule `json:"finalized"`
			Env        map[string]string       `json:"env"`
			Llava      *struct {
				Example   string                  `json:"example"`
				Finalized map[string]bridgeModule `json:"finalized"`
				Error     string                  `json:"error"`
			} `json:"llava"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &fx))
	require.Len(t, fx.Bridge, 40)
	require.NotEmpty(t, fx.Cases)
	for _, c := range fx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			p := build(t, c.LayoutText, Options{NoProgram: true})
			var b bytes.Buffer
			require.NoError(t, WriteBridge(&b, p))
			assert.Equal(t, c.Python, b.String(), "the Python finalize() accepted")
			assert.Equal(t, p.WorldSize, c.WorldSize)
			env := map[string]string{}
			for _, e := range BridgeEnv(p.topo) {
				env[e.Name] = e.Value
			}
			assert.Equal(t, c.Env, env)
			same := func(got map[string]bridgeModule, dense bool) {
				require.Len(t, got, len(p.topo.Modules))
				for _, m := range p.topo.Modules {
					g, ok := got[m.Name]
					if !ok && dense { // the llava examples' own module keys
						g, ok = got[map[string]string{"vision": "images", "audio": "audios"}[m.Name]]
					}
					require.True(t, ok, m.Name)
					require.NotNil(t, g.DP)
					assert.Equal(t, m.DP, *g.DP, m.Name)
					assert.Equal(t, m.NumRanks, g.Total, m.Name)
					assert.Equal(t, m.RankOffset, g.Offset, m.Name)
					assert.Equal(t, []int{m.TP, m.PP}, []int{g.TP, g.PP}, m.Name)
					if !dense {
						assert.Equal(t, []int{m.CP, m.EP, m.ExptTP, m.ExptDP}, []int{g.CP, g.EP, g.ExptTP, g.ExptDP}, m.Name)
					}
				}
			}
			same(c.Finalized, false)
			if c.Llava != nil && len(bridgeUnread(p.topo)) == 0 {
				require.Empty(t, c.Llava.Error)
				same(c.Llava.Finalized, true)
			}
		})
	}
}

func TestBridgeRefusesOtherTargets(t *testing.T) {
	p := build(t, nemotron, Options{LayoutArgs: true})
	assert.ErrorContains(t, WriteBridge(&bytes.Buffer{}, p), "--format bridge is for target megatron-bridge")
}

// A megatron-bridge plan exports the llava example's MIMO_* variables; an
// --env of the same name wins.
func TestBridgePlanEnv(t *testing.T) {
	src := "version: 1\ntarget: megatron-bridge\nworld_size: 8\nmodules:\n- {name: language, num_ranks: 4, tp: 4}\n- {name: vision, num_ranks: 4, tp: 4, rank_offset: 4}\n"
	p := build(t, src, Options{Program: []string{"llava.py"}, Env: []EnvVar{{"MIMO_VISION_PP", "1"}, {"X", "y"}}})
	var names []string
	for _, e := range p.Env {
		names = append(names, e.Name+"="+e.Value)
	}
	assert.Equal(t, []string{"CUDA_DEVICE_ORDER=PCI_BUS_ID", "OMP_NUM_THREADS=1",
		"MIMO_LLM_TP=4", "MIMO_LLM_PP=1", "MIMO_LLM_DP=1", "MIMO_LLM_OFFSET=0",
		"MIMO_VISION_TP=4", "MIMO_VISION_PP=1", "MIMO_VISION_DP=1", "MIMO_VISION_OFFSET=4", "X=y"}, names)
}
