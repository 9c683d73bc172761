package launch

import (
	"bytes"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/testutil"
)

// k8sDocs checks a Kubernetes plan's documents (testutil.K8sDocs) and
// returns its topology ConfigMap, if any, and its job.
func k8sDocs(t *testing.T, out []byte) (cm map[string]any, job map[string]any) {
	t.Helper()
	cms, job := testutil.K8sDocs(t, out)
	for name, c := range cms {
		if strings.HasSuffix(name, "-topology") {
			cm = c
		}
	}
	return cm, job
}

// get walks a decoded document.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

func TestSchemaCatchesMistakes(t *testing.T) {
	tj, ptj := testutil.CRDSchemas(t)
	for _, bad := range []string{
		`{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"x"},"spec":{"runtimeRef":{"name":"r"},"trainer":{"numNodes":"2"}}}`,
		`{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"x"},"spec":{"runtimeRef":{"name":"r"},"trainer":{"nodes":2}}}`,
		`{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"x"},"spec":{"trainer":{"numNodes":2}}}`,
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		require.NoError(t, err)
		assert.Error(t, tj.Validate(v), bad)
	}
	v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"x"},"spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1,"template":{"spec":{"containers":[{"name":"pytorch","image":"i","volumeMount":[]}]}}}}}}`))
	assert.Error(t, ptj.Validate(v), "a misspelt container field")
}

func TestTrainJob(t *testing.T) {
	p := build(t, threeModule, Options{
		Program: []string{"train.py", "$(HOME)", "a$b", "it's"}, Image: "nvcr.io/nvidia/pytorch:25.01-py3", MasterPort: 23456,
		Env: []EnvVar{{"EXTRA", "$(X)"}}, K8s: K8sOptions{CPU: "96", Memory: "1000Gi", ShmSize: "64Gi"},
	})
	var b bytes.Buffer
	require.NoError(t, WriteK8s(&b, p))
	cm, job := k8sDocs(t, b.Bytes())
	require.NotNil(t, cm, "the topology ConfigMap")
	assert.Equal(t, "three-module-4node-topology", get(cm, "metadata", "name"))
	assert.Equal(t, string(p.Topology), get(cm, "data", TopologyFile))

	assert.Equal(t, "three-module-4node", get(job, "metadata", "name"))
	assert.Equal(t, DefaultRuntime, get(job, "spec", "runtimeRef", "name"))
	tr := get(job, "spec", "trainer")
	assert.Equal(t, 4, get(tr, "numNodes"))
	assert.Equal(t, 8, get(tr, "numProcPerNode"))
	assert.Equal(t, "nvcr.io/nvidia/pytorch:25.01-py3", get(tr, "image"))
	assert.Equal(t, []any{"torchrun", "--nnodes=4", "--nproc-per-node=8", "--node-rank=$(PET_NODE_RANK)", "--master-addr=$(PET_MASTER_ADDR)",
		"--master-port=23456", "train.py", "$$(HOME)", "a$$b", "it's"}, get(tr, "command"))
	assert.Equal(t, []any{
		map[string]any{"name": "CUDA_DEVICE_ORDER", "value": "PCI_BUS_ID"},
		map[string]any{"name": "OMP_NUM_THREADS", "value": "1"},
		map[string]any{"name": "EXTRA", "value": "$$(X)"},
		map[string]any{"name": TopologyEnv, "value": "/etc/mimoplan/" + TopologyFile},
	}, get(tr, "env"))
	assert.Equal(t, map[string]any{
		"limits":   map[string]any{"nvidia.com/gpu": "8"},
		"requests": map[string]any{"nvidia.com/gpu": "8", "cpu": "96", "memory": "1000Gi"},
	}, get(tr, "resourcesPerNode"))

	patch := get(job, "spec", "runtimePatches", 0)
	assert.Equal(t, "mimoplan", get(patch, "manager"))
	rj := get(patch, "trainingRuntimeSpec", "template", "spec", "replicatedJobs", 0)
	assert.Equal(t, "node", get(rj, "name"))
	pod := get(rj, "template", "spec", "template", "spec")
	assert.Equal(t, []any{
		map[string]any{"name": "dshm", "emptyDir": map[string]any{"medium": "Memory", "sizeLimit": "64Gi"}},
		map[string]any{"name": "topology", "configMap": map[string]any{"name": "three-module-4node-topology"}},
	}, get(pod, "volumes"))
	assert.Equal(t, []any{map[string]any{"name": "node", "volumeMounts": []any{
		map[string]any{"name": "dshm", "mountPath": "/dev/shm"},
		map[string]any{"name": "topology", "mountPath": "/etc/mimoplan", "readOnly": true},
	}}}, get(pod, "containers"))
	assert.Contains(t, b.String(), "# 3          three-module-4node-node-0-3  24-31  language 24-31")

	t.Run("megatron-lm, c10d, a runtime of its own: no topology, no requests", func(t *testing.T) {
		p := build(t, nemotron, Options{LayoutArgs: true, Image: "img", Rendezvous: C10d, K8s: K8sOptions{Runtime: "torch-gb200"}})
		var b bytes.Buffer
		require.NoError(t, WriteK8s(&b, p))
		cm, job := k8sDocs(t, b.Bytes())
		assert.Nil(t, cm)
		assert.Equal(t, "torch-gb200", get(job, "spec", "runtimeRef", "name"))
		assert.Contains(t, get(job, "metadata", "annotations", "mimoplan/notes"), "not fixed")
		cmd := get(job, "spec", "trainer", "command")
		assert.Contains(t, cmd, "--rdzv-endpoint=$(PET_MASTER_ADDR):29500")
		assert.Contains(t, cmd, "--mimo-llm-offset")
		assert.Nil(t, get(job, "spec", "trainer", "resourcesPerNode", "requests"))
		vols := get(job, "spec", "runtimePatches", 0, "trainingRuntimeSpec", "template", "spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "volumes")
		assert.Equal(t, []any{map[string]any{"name": "dshm", "emptyDir": map[string]any{"medium": "Memory"}}}, vols)
	})
	t.Run("needs an image", func(t *testing.T) {
		p.Image = ""
		assert.ErrorContains(t, WriteK8s(&bytes.Buffer{}, p), "--image")
	})
}

func TestPyTorchJob(t *testing.T) {
	p := build(t, threeModule, Options{
		Program: []string{"train.py", "$(HOME)", "a$b", "it's"}, Image: "nvcr.io/nvidia/pytorch:25.01-py3", MasterPort: 23456,
		Env: []EnvVar{{"EXTRA", "$(X)"}}, TopologyPath: "/shared/t.json", K8s: K8sOptions{Memory: "64Gi"},
	})
	var b bytes.Buffer
	require.NoError(t, WritePyTorchJob(&b, p))
	cm, job := k8sDocs(t, b.Bytes())
	require.NotNil(t, cm)
	assert.Equal(t, "8", get(job, "spec", "nprocPerNode"), "nprocPerNode is a string")
	specs := get(job, "spec", "pytorchReplicaSpecs").(map[string]any)
	require.Len(t, specs, 2)
	assert.Equal(t, 1, get(specs, "Master", "replicas"))
	assert.Equal(t, 3, get(specs, "Worker", "replicas"))
	for role := range specs {
		assert.Equal(t, "Never", get(specs, role, "restartPolicy"), role)
		pod := get(specs, role, "template", "spec")
		c := get(pod, "containers", 0)
		assert.Equal(t, "pytorch", get(c, "name"))
		assert.Equal(t, []any{"torchrun", "--nnodes=4", "--nproc-per-node=8", "--node-rank=$(RANK)", "--master-addr=$(MASTER_ADDR)",
			"--master-port=23456", "train.py", "$$(HOME)", "a$$b", "it's"}, get(c, "command"))
		env := get(c, "env").([]any)
		assert.Equal(t, map[string]any{"name": TopologyEnv, "value": "/etc/mimoplan/topology.json"}, env[len(env)-1],
			"the ConfigMap's file, not --topology-out's path on the planning machine")
		assert.Len(t, env, 4)
		assert.Equal(t, []any{map[string]any{"name": "pytorchjob-port", "containerPort": 23456}}, get(c, "ports"))
		assert.Equal(t, map[string]any{"limits": map[string]any{"nvidia.com/gpu": "8"},
			"requests": map[string]any{"nvidia.com/gpu": "8", "memory": "64Gi"}}, get(c, "resources"))
		assert.Len(t, get(c, "volumeMounts"), 2)
		assert.Equal(t, "Memory", get(pod, "volumes", 0, "emptyDir", "medium"))
		assert.Equal(t, "/dev/shm", get(c, "volumeMounts", 0, "mountPath"))
	}
	assert.Contains(t, b.String(), "# 3          three-module-4node-worker-2  24-31  language 24-31")

	p = build(t, nemotron, Options{LayoutArgs: true, Image: "img"})
	b.Reset()
	require.NoError(t, WritePyTorchJob(&b, p))
	cm, job = k8sDocs(t, b.Bytes())
	assert.Nil(t, cm)
	assert.Equal(t, []string{"Master"}, keys(get(job, "spec", "pytorchReplicaSpecs").(map[string]any)))
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
