package testutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// CRDSchema compiles the OpenAPI v3 schema of one version of a vendored
// CRD (internal/launch/testdata/crds, see its README). Kubernetes prunes fields a
// structural schema does not name (and kubectl --validate=strict refuses
// them), so every object that lists its properties, and does not keep
// unknown fields, is closed with additionalProperties: false here: a
// misspelt field fails the test instead of vanishing on apply.
func CRDSchema(t testing.TB, file, version string) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(RepoRoot(), "internal", "launch", "testdata", "crds", file))
	require.NoError(t, err)
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `yaml:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `yaml:"openAPIV3Schema"`
				} `yaml:"schema"`
			} `yaml:"versions"`
		} `yaml:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &crd))
	for _, v := range crd.Spec.Versions {
		if v.Name != version {
			continue
		}
		s := v.Schema.OpenAPIV3Schema
		closeObjects(s)
		doc := ToJSON(t, s)
		c := jsonschema.NewCompiler()
		require.NoError(t, c.AddResource(file, doc))
		sch, err := c.Compile(file)
		require.NoError(t, err)
		return sch
	}
	t.Fatalf("%s has no version %s", file, version)
	return nil
}

func closeObjects(v any) {
	switch x := v.(type) {
	case map[string]any:
		_, props := x["properties"].(map[string]any)
		_, extra := x["additionalProperties"]
		if props && !extra && x["x-kubernetes-preserve-unknown-fields"] != true {
			x["additionalProperties"] = false
		}
		for _, c := range x {
			closeObjects(c)
		}
	case []any:
		for _, c := range x {
			closeObjects(c)
		}
	}
}

// ToJSON turns YAML-decoded data into what the validator reads.
func ToJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	return out
}

var (
	schemasOnce          sync.Once
	trainJobSch, ptjSch  *jsonschema.Schema
	dns1035, dnsSubdomin = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`), regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// CRDSchemas are the TrainJob (v1alpha1) and PyTorchJob (v1) schemas,
// compiled once.
func CRDSchemas(t testing.TB) (trainJob, pytorchJob *jsonschema.Schema) {
	schemasOnce.Do(func() {
		trainJobSch = CRDSchema(t, "trainer.kubeflow.org_trainjobs.yaml", "v1alpha1")
		ptjSch = CRDSchema(t, "kubeflow.org_pytorchjobs.yaml", "v1")
	})
	return trainJobSch, ptjSch
}

// K8sDocs splits a Kubernetes plan into its documents, each checked: a
// ConfigMap as the core API has it, a job against its CRD's schema (and
// the CEL rules of the TrainJob CRD that a create can break). It returns
// the ConfigMaps by name and the job.
func K8sDocs(t testing.TB, out []byte) (cms map[string]map[string]any, job map[string]any) {
	t.Helper()
	tj, ptj := CRDSchemas(t)
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		meta := doc["metadata"].(map[string]any)
		name := meta["name"].(string)
		switch doc["kind"] {
		case "ConfigMap":
			assert.Equal(t, "v1", doc["apiVersion"])
			assert.Regexp(t, dnsSubdomin, name)
			assert.LessOrEqual(t, len(name), 253)
			for k, v := range doc["data"].(map[string]any) {
				assert.Regexp(t, `^[-._a-zA-Z0-9]+$`, k)
				assert.IsType(t, "", v)
			}
			if cms == nil {
				cms = map[string]map[string]any{}
			}
			cms[name] = doc
		case "TrainJob":
			assert.Equal(t, "trainer.kubeflow.org/v1alpha1", doc["apiVersion"])
			require.NoError(t, tj.Validate(ToJSON(t, doc)), "TrainJob against its CRD:\n%s", out)
			// The CRD's CEL rules (x-kubernetes-validations) for a create.
			assert.Regexp(t, dns1035, name)
			assert.LessOrEqual(t, len(name), 63)
			tr := doc["spec"].(map[string]any)["trainer"].(map[string]any)
			assert.GreaterOrEqual(t, tr["numProcPerNode"], 1)
			job = doc
		case "PyTorchJob":
			assert.Equal(t, "kubeflow.org/v1", doc["apiVersion"])
			require.NoError(t, ptj.Validate(ToJSON(t, doc)), "PyTorchJob against its CRD:\n%s", out)
			assert.Regexp(t, dns1035, name)
			job = doc
		default:
			t.Fatalf("unexpected document %v", doc["kind"])
		}
	}
	require.NotNil(t, job)
	return cms, job
}
