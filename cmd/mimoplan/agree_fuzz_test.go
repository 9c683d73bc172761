package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/grid"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/topo"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// planJSON is the part of the render JSON (and of the topology and
// preflight plans, which are render JSON) that says where the groups are.
type planJSON struct {
	WorldSize int `json:"world_size"`
	Modules   []struct {
		Name       string             `json:"name"`
		RankOffset int                `json:"rank_offset"`
		NumRanks   int                `json:"num_ranks"`
		Groups     map[string][][]int `json:"groups"`
	} `json:"modules"`
}

type launchJSON struct {
	NNodes       int `json:"nnodes"`
	NProcPerNode int `json:"nproc_per_node"`
	Nodes        []struct {
		NodeRank  int `json:"node_rank"`
		FirstRank int `json:"first_rank"`
		LastRank  int `json:"last_rank"`
		Modules   []struct {
			Name      string `json:"name"`
			FirstRank int    `json:"first_rank"`
			LastRank  int    `json:"last_rank"`
		} `json:"modules"`
	} `json:"nodes"`
}

// FuzzPlansAgree: for every valid layout, render's JSON and the plan
// preflight emits list the same groups, which are the grid's; the
// topology launch-plan writes beside its plan gives the same spans and
// sizes (the program builds the same groups from them); and the launch
// plan's nodes run exactly the ranks of the modules render places there.
func FuzzPlansAgree(f *testing.F) {
	for _, seed := range testutil.LayoutSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		src := testutil.LayoutFromBytes(b)
		l, d := layout.Parse("fuzz.yaml", []byte(src))
		res := validate.Check(l, d)
		if !res.Valid(false) {
			return
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "layout.yaml")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		run := func(args ...string) (int, string, string) {
			var out, errb strings.Builder
			code := execute(args, strings.NewReader(""), &out, &errb)
			return code, out.String(), errb.String()
		}
		decode := func(what, s string, v any) {
			if err := json.Unmarshal([]byte(s), v); err != nil {
				t.Fatalf("%s is not JSON (%v):\n%s\nlayout:\n%s", what, err, s, src)
			}
		}

		code, out, errOut := run("render", path, "--format", "json")
		if code != exitOK {
			t.Fatalf("render: exit %d: %s\n%s", code, errOut, src)
		}
		var rendered planJSON
		decode("render", out, &rendered)
		out0 := out
		checkGrid(t, res.Topology, rendered, src)

		nodes := 1
		if l.Cluster != nil {
			nodes = l.Cluster.Nodes
		}
		hosts := make([]string, nodes)
		for i := range hosts {
			hosts[i] = fmt.Sprintf("h%d", i)
		}
		code, _, errOut = run("preflight", path, "--out", filepath.Join(dir, "pf"), "--hosts", strings.Join(hosts, ","))
		if code != exitOK {
			t.Fatalf("preflight --emit: exit %d: %s\n%s", code, errOut, src)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "pf", "plan.json"))
		if err != nil {
			t.Fatal(err)
		}
		var pre planJSON
		decode("preflight plan", string(raw), &pre)
		if !reflect.DeepEqual(rendered, pre) {
			t.Fatalf("the preflight plan's groups differ from render's:\n%s", src)
		}

		topo := filepath.Join(dir, "topology.json")
		code, out, errOut = run("launch-plan", path, "--format", "json", "--hosts", strings.Join(hosts, ","), "--topology-out", topo, "--", "train.py")
		if code != exitOK {
			// A valid layout that the target's launcher cannot express is
			// refused with a rule; nothing else may stop it.
			if code != exitInvalid || !strings.Contains(errOut, "error:") {
				t.Fatalf("launch-plan: exit %d: %s\n%s", code, errOut, src)
			}
			return
		}
		var plan launchJSON
		decode("launch plan", out, &plan)
		raw, err = os.ReadFile(topo)
		if err != nil {
			t.Fatal(err)
		}
		// The topology that travels with the plan gives each module's
		// span and sizes, from which the program builds the groups: each
		// value it has is render's.
		var written, full struct {
			WorldSize int              `json:"world_size"`
			Modules   []map[string]any `json:"modules"`
		}
		decode("topology", string(raw), &written)
		decode("render", out0, &full)
		if written.WorldSize != full.WorldSize || len(written.Modules) != len(full.Modules) {
			t.Fatalf("topology: world %d, %d modules; render: %d, %d:\n%s", written.WorldSize, len(written.Modules), full.WorldSize, len(full.Modules), src)
		}
		for i, m := range written.Modules {
			for k, v := range m {
				if !reflect.DeepEqual(v, full.Modules[i][k]) {
					t.Fatalf("module %d: the topology's %s is %v, render's %v:\n%s", i, k, v, full.Modules[i][k], src)
				}
			}
			if len(m) < 12 {
				t.Fatalf("module %d: the topology gives only %v:\n%s", i, m, src)
			}
		}
		checkNodes(t, plan, rendered, src)
	})
}

// checkGrid: the JSON lists the grid's groups, kind by kind.
func checkGrid(t *testing.T, topo *topo.Topology, p planJSON, src string) {
	t.Helper()
	if p.WorldSize != topo.WorldSize || len(p.Modules) != len(topo.Modules) {
		t.Fatalf("render: world %d, %d modules; topology: %d, %d:\n%s", p.WorldSize, len(p.Modules), topo.WorldSize, len(topo.Modules), src)
	}
	for i, m := range topo.Modules {
		pm := p.Modules[i]
		if pm.Name != m.Name || pm.RankOffset != m.RankOffset || pm.NumRanks != m.NumRanks || len(pm.Groups) != len(m.Groups) {
			t.Fatalf("module %d: render %s [%d, +%d) with %d kinds, grid %s [%d, +%d) with %d:\n%s",
				i, pm.Name, pm.RankOffset, pm.NumRanks, len(pm.Groups), m.Name, m.RankOffset, m.NumRanks, len(m.Groups), src)
		}
		for _, g := range m.Groups {
			if !reflect.DeepEqual(pm.Groups[g.Kind], g.Enum.Groups()) {
				t.Fatalf("module %s %s: render %v, grid %v:\n%s", m.Name, g.Kind, pm.Groups[g.Kind], g.Enum.Groups(), src)
			}
		}
		if _, ok := pm.Groups["embd"]; ok != (m.Name == grid.LanguageModule) {
			t.Fatalf("module %s: embd groups %v:\n%s", m.Name, ok, src)
		}
	}
}

// checkNodes: node i runs ranks [i*nproc, (i+1)*nproc), and on it exactly
// the modules whose spans meet that range, over their common ranks.
func checkNodes(t *testing.T, plan launchJSON, p planJSON, src string) {
	t.Helper()
	if plan.NNodes*plan.NProcPerNode != p.WorldSize || len(plan.Nodes) != plan.NNodes {
		t.Fatalf("launch plan: %d nodes x %d for a world of %d:\n%s", plan.NNodes, plan.NProcPerNode, p.WorldSize, src)
	}
	for i, n := range plan.Nodes {
		lo, hi := i*plan.NProcPerNode, (i+1)*plan.NProcPerNode-1
		if n.NodeRank != i || n.FirstRank != lo || n.LastRank != hi {
			t.Fatalf("node %d: rank %d runs [%d, %d], want [%d, %d]:\n%s", i, n.NodeRank, n.FirstRank, n.LastRank, lo, hi, src)
		}
		var want []string
		for _, m := range p.Modules {
			a, b := max(lo, m.RankOffset), min(hi, m.RankOffset+m.NumRanks-1)
			if a <= b {
				want = append(want, fmt.Sprintf("%s [%d, %d]", m.Name, a, b))
			}
		}
		var got []string
		for _, m := range n.Modules {
			got = append(got, fmt.Sprintf("%s [%d, %d]", m.Name, m.FirstRank, m.LastRank))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("node %d runs %v, render places %v there:\n%s", i, got, want, src)
		}
	}
}
