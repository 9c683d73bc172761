package launch

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mimoplan/mimoplan/internal/topo"
)

// TopologyFile is the name of the topology file a plan writes at run time
// (sh, slurm) or mounts (k8s), in the directory MIMOPLAN_TOPOLOGY points
// into.
const TopologyFile = "topology.json"

// topologyJSON is what MIMOPLAN_TOPOLOGY points at: the render JSON's
// modules without their groups, which follow from the sizes (Megatron's
// HyperCommGrid builds them from a ModuleGridSpec), so that a plan of any
// size carries a few hundred bytes per module.
type topologyJSON struct {
	Version   int              `json:"version"`
	Name      string           `json:"name"`
	Target    string           `json:"target"`
	WorldSize int              `json:"world_size"`
	Mode      string           `json:"mode"`
	Modules   []topologyModule `json:"modules"`
}

type topologyModule struct {
	Name         string `json:"name"`
	RankOffset   int    `json:"rank_offset"`
	NumRanks     int    `json:"num_ranks"`
	TP           int    `json:"tp"`
	GTPRemat     int    `json:"gtp_remat"`
	CP           int    `json:"cp"`
	PP           int    `json:"pp"`
	DP           int    `json:"dp"`
	EP           int    `json:"ep"`
	ExptTP       int    `json:"expt_tp"`
	ExptGTPRemat int    `json:"expt_gtp_remat"`
	ExptDP       int    `json:"expt_dp"`
}

// Topology is the topology JSON of t, one module a line, ending in a
// newline: what --topology-out writes and every plan carries.
func Topology(t *topo.Topology) []byte {
	tj := topologyJSON{Version: 1, Name: t.Name, Target: string(t.Target), WorldSize: t.WorldSize, Mode: string(t.Mode)}
	for _, m := range t.Modules {
		tj.Modules = append(tj.Modules, topologyModule{
			Name: m.Name, RankOffset: m.RankOffset, NumRanks: m.NumRanks, TP: m.TP, GTPRemat: m.GTPRemat,
			CP: m.CP, PP: m.PP, DP: m.DP, EP: m.EP, ExptTP: m.ExptTP, ExptGTPRemat: m.ExptGTPRemat, ExptDP: m.ExptDP,
		})
	}
	var b bytes.Buffer
	head, _ := json.Marshal(struct {
		Version   int    `json:"version"`
		Name      string `json:"name"`
		Target    string `json:"target"`
		WorldSize int    `json:"world_size"`
		Mode      string `json:"mode"`
	}{tj.Version, tj.Name, tj.Target, tj.WorldSize, tj.Mode})
	b.Write(head[:len(head)-1])
	b.Write(topologyTraining(t))
	b.Write(topologyEnv(t))
	b.WriteString(`,"modules":[`)
	for i, m := range tj.Modules {
		if i > 0 {
			b.WriteByte(',')
		}
		line, _ := json.Marshal(m)
		b.WriteString("\n  ")
		b.Write(line)
	}
	b.WriteString("\n]}\n")
	return b.Bytes()
}

// topologyTraining is the layout's training settings that differ from
// Megatron's defaults, as ,"training":{...} with JSON's types, keys named
// as Megatron's arguments: how they reach a program that reads the
// topology (targets core and megatron-bridge); nothing when there are
// none, so that such a topology is what it was.
func topologyTraining(t *topo.Topology) []byte {
	if t.Layout == nil || t.Layout.Training == nil {
		return nil
	}
	stated := t.Layout.Training.Stated()
	if len(stated) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString(`,"training":{`)
	for i, kv := range stated {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[0])
		b.Write(k)
		b.WriteByte(':')
		if _, err := strconv.Atoi(kv[1]); err == nil || kv[1] == "true" || kv[1] == "false" {
			b.WriteString(kv[1])
		} else {
			v, _ := json.Marshal(kv[1])
			b.Write(v)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// topologyEnv is the layout's env block as ,"env":{...}, in its order, each
// value the text the plan exports: what mimoplan import reads back, since
// a plan's exports do not say which came from the layout; nothing without
// one.
func topologyEnv(t *topo.Topology) []byte {
	if t.Layout == nil || len(t.Layout.Env) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString(`,"env":{`)
	for i, e := range t.Layout.Env {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.Name)
		v, _ := json.Marshal(e.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}
