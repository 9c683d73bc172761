package suggest

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/plan"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// snapshot stands in for NVML's (which cannot run here): n GPUs of one
// model with this much memory.
func snapshot(n int, name string, mem uint64) func() (*gpuprobe.Snapshot, error) {
	return func() (*gpuprobe.Snapshot, error) {
		s := &gpuprobe.Snapshot{DriverVersion: "570.86.15", CUDADriverVersion: "12.8"}
		for i := range n {
			s.GPUs = append(s.GPUs, gpuprobe.GPU{Index: i, Name: name, UUID: "GPU-" + string(rune('a'+i)), MemoryBytes: mem, MIGDevices: []string{}})
		}
		return s, nil
	}
}

const h100 = "NVIDIA H100 80GB HBM3"

// node is the Probe suggestcmd builds from a snapshot: gpuprobe.NodeEnv's
// machine and findings.
func node(snap func() (*gpuprobe.Snapshot, error)) Probe {
	return func() (*layout.Machine, []diag.Diagnostic, error) {
		s, err := snap()
		if err != nil {
			return nil, nil, err
		}
		return gpuprobe.NodeEnv(s)
	}
}

// A probed spec is planned on this node, and every candidate, written as
// --out writes it, is a layout of this node that validate accepts.
func TestReadSpecProbed(t *testing.T) {
	t.Setenv(gpuprobe.VisibleDevicesEnv, "0,1,2,3")
	path := "../../testdata/suggest/three-8gpu.yaml"
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var w bytes.Buffer
	spec, err := ReadSpec(&w, path, data, node(snapshot(8, h100, 85520809984)))
	require.NoError(t, err)
	assert.Equal(t, "mimoplan: planning for this node (NVML): 4 x "+h100+"; cluster: {nodes: 1, gpus_per_node: 4, gpu_memory: 81559MiB}\n"+
		path+":3:36: note: this node's cluster.gpus_per_node 4 replaces the spec's 8\n", w.String())
	assert.Equal(t, 4, spec.WorldSize)
	res, err := plan.Search(&plan.Request{Spec: spec, Est: plan.Model{}, HW: steptime.GPUs["H100"], GPUMemory: float64(spec.GPUMemory)})
	require.NoError(t, err)
	require.NotEmpty(t, res.Candidates)
	for i := range res.Candidates {
		c := &res.Candidates[i]
		end := 0
		for _, m := range c.Modules {
			end = max(end, m.RankOffset+m.NumRanks)
		}
		assert.Equal(t, 4, end, "candidate %d spans this node", i)
		var out bytes.Buffer
		require.NoError(t, WriteLayout(&out, data, c))
		assert.Contains(t, out.String(), "cluster: {nodes: 1, gpus_per_node: 4, gpu_memory: 81559MiB} # this node, probed: 4 x "+h100+"\n")
		l, d := layout.Parse("out.yaml", out.Bytes())
		r := validate.Check(l, d)
		errs, _ := r.Diags.Count()
		require.Zero(t, errs, "#%d:\n%s\n%v", i, out.String(), r.Diags.Items)
		assert.Equal(t, int64(81559<<20), l.GPUMemory)
	}
}

// A spec with neither world_size nor cluster is read on the probed node,
// and its written layout gets the node's cluster before modules.
func TestReadSpecProbedWithoutCluster(t *testing.T) {
	t.Setenv(gpuprobe.VisibleDevicesEnv, "")
	os.Unsetenv(gpuprobe.VisibleDevicesEnv)
	data := []byte("version: 1\n# the model\nmodules:\n  - {name: language, model: {preset: llama3-8b, num_layers: 4}}\n")
	var w bytes.Buffer
	spec, err := ReadSpec(&w, "s.yaml", data, node(snapshot(2, h100, 80<<30)))
	require.NoError(t, err)
	assert.Equal(t, "mimoplan: planning for this node (NVML): 2 x "+h100+"; cluster: {nodes: 1, gpus_per_node: 2, gpu_memory: 80GiB}\n", w.String())
	res, err := plan.Search(&plan.Request{Spec: spec, Est: plan.Model{}, HW: steptime.GPUs["H100"], GPUMemory: float64(spec.GPUMemory), Top: 1})
	require.NoError(t, err)
	require.NotEmpty(t, res.Candidates)
	var out bytes.Buffer
	require.NoError(t, WriteLayout(&out, data, &res.Candidates[0]))
	assert.Regexp(t, "(?s)version: 1\ncluster: \\{nodes: 1, gpus_per_node: 2, gpu_memory: 80GiB\\} # this node.*\n# the model\nmodules:", out.String())
	l, d := layout.Parse("out.yaml", out.Bytes())
	r := validate.Check(l, d)
	errs, _ := r.Diags.Count()
	require.Zero(t, errs, "%s\n%v", out.String(), r.Diags.Items)
}

// The spec's errors, and the machine's, end ReadSpec with exit 1 after
// they are printed; the probe's own error is returned as it is.
func TestReadSpecErrors(t *testing.T) {
	t.Setenv(gpuprobe.VisibleDevicesEnv, "")
	os.Unsetenv(gpuprobe.VisibleDevicesEnv)
	good := []byte("version: 1\nmodules:\n  - {name: language}\n")
	boom := exitcode.Wrap(exitcode.NoGPU, errors.New("NVML: count devices: boom"))
	tests := []struct {
		name   string
		data   []byte
		probe  Probe
		code   int
		err    string // the error's text, for an error that is not printed
		output string // what is written
	}{
		{name: "no cluster, no probe", data: good, code: exitcode.Invalid, output: "s.yaml:1:1: error: layout needs world_size or cluster"},
		{name: "the probe's error", data: good, probe: func() (*layout.Machine, []diag.Diagnostic, error) { return nil, nil, boom }, code: exitcode.NoGPU, err: "boom"},
		{
			name: "mixed models: validate --probe's error, with the spec's", probe: node(func() (*gpuprobe.Snapshot, error) {
				s, _ := snapshot(2, h100, 80<<30)()
				s.GPUs[1].Name = "NVIDIA A100-SXM4-80GB"
				return s, nil
			}),
			data: []byte("version: 1\nmodules:\n  - {name: language, max_tp: 0}\n"), code: exitcode.Invalid,
			output: "s.yaml: error: the visible GPUs are of 2 models",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			spec, err := ReadSpec(&w, "s.yaml", tt.data, tt.probe)
			assert.Nil(t, spec)
			code, ok := exitcode.Of(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, tt.code, code)
			if tt.err != "" {
				assert.Contains(t, err.Error(), tt.err)
				assert.Empty(t, w.String())
			} else {
				assert.Contains(t, w.String(), tt.output)
			}
		})
	}
}
