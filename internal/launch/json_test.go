package launch

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJSON(t *testing.T) {
	p := build(t, threeModule, Options{Hosts: hosts4, Program: []string{"train.py", "<&>"}, TopologyPath: "/t.json", Rendezvous: C10d})
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, p))
	assert.Contains(t, b.String(), `"<&>"`, "no HTML escaping")
	var got struct {
		Name         string            `json:"name"`
		Target       string            `json:"target"`
		WorldSize    int               `json:"world_size"`
		NNodes       int               `json:"nnodes"`
		NProcPerNode int               `json:"nproc_per_node"`
		Rendezvous   Rendezvous        `json:"rendezvous"`
		Notes        []string          `json:"notes"`
		Env          map[string]string `json:"env"`
		Topology     *topologyJSON     `json:"topology"`
		Nodes        []struct {
			NodeRank  int          `json:"node_rank"`
			Host      string       `json:"host"`
			FirstRank int          `json:"first_rank"`
			LastRank  int          `json:"last_rank"`
			Modules   []ModuleSpan `json:"modules"`
			Command   []string     `json:"command"`
		} `json:"nodes"`
	}
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&got))
	assert.Equal(t, "three-module-4node", got.Name)
	assert.Equal(t, "core", got.Target)
	assert.Equal(t, 32, got.WorldSize)
	assert.Equal(t, 4, got.NNodes)
	assert.Equal(t, 8, got.NProcPerNode)
	assert.Equal(t, Rendezvous{Backend: "c10d", MasterAddr: "h0", MasterPort: 29500, ID: "three-module-4node"}, got.Rendezvous)
	require.Len(t, got.Notes, 1)
	assert.Equal(t, map[string]string{"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "OMP_NUM_THREADS": "1", "MIMOPLAN_TOPOLOGY": "/t.json"}, got.Env, "every node's environment, once")
	require.NotNil(t, got.Topology, "the plan carries the topology")
	assert.Equal(t, "three-module-4node", got.Topology.Name)
	assert.Len(t, got.Topology.Modules, 3)
	require.Len(t, got.Nodes, 4)
	for i, n := range got.Nodes {
		assert.Equal(t, i, n.NodeRank)
		assert.Equal(t, hosts4[i], n.Host)
		assert.Equal(t, 8*i, n.FirstRank)
		assert.Equal(t, 8*i+7, n.LastRank)
		assert.Equal(t, p.Node(i).Modules, n.Modules)
		assert.Equal(t, p.Node(i).Command, n.Command)
	}
}

func TestJSONNoTopology(t *testing.T) {
	p := build(t, nemotron, Options{LayoutArgs: true})
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, p))
	assert.NotContains(t, b.String(), `"topology"`, "megatron-lm reads its arguments")
	assert.NotContains(t, b.String(), TopologyEnv)
}
