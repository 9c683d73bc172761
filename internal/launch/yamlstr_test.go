package launch

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// yaml11 are plain scalars that a YAML 1.1 or 1.2 loader reads as
// something other than a string (or cannot read at all: "=").
var yaml11 = []string{
	"", "=", "<<", "y", "Y", "yes", "Yes", "NO", "on", "Off", "true", "FALSE", "~", "null", "NULL",
	"0b101", "-0b1_0", "017", "0o17", "0x1F", "+0x_1", "1_000", "-12", "0", "1:20", "-1:20:30", "1:20.5",
	"1.5", ".5", "1.", "-.5e+3", "1e5", "6.8523015e+5", ".inf", "-.Inf", "+.INF", ".nan", ".NaN",
	"2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2001-12-15T02:59:43.1Z",
}

// plainStrings stay plain: quoting them is harmless, but they show the
// check is not "quote everything".
var plainStrings = []string{"train.py", "--lr", "a=b", "-", "--", "x1", "1e", "0x", "yes!", "no-op", "NaN", "inf", "nul", "1:2a", "2001-1-1x", "<<x", "==", "pytorch"}

func TestYAMLAmbiguous(t *testing.T) {
	for _, s := range yaml11 {
		assert.True(t, yamlAmbiguous(s), "%q must be quoted", s)
	}
	for _, s := range plainStrings {
		assert.False(t, yamlAmbiguous(s), "%q may stay plain", s)
	}
}

func encodeStrings(t *testing.T, ss []string) []byte {
	t.Helper()
	ys := make([]YAMLString, len(ss))
	for i, s := range ss {
		ys[i] = YAMLString(s)
	}
	b, err := yaml.Marshal(map[string][]YAMLString{"values": ys})
	require.NoError(t, err)
	return b
}

// pyYAMLLoad reads YAML with PyYAML (a YAML 1.1 loader), as JSON; the test
// is skipped where python3 or PyYAML is missing.
func pyYAMLLoad(t *testing.T, doc []byte) []byte {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	if exec.Command(py, "-c", "import yaml").Run() != nil {
		t.Skip("PyYAML not installed")
	}
	cmd := exec.Command(py, "-c", "import json, sys, yaml; json.dump(list(yaml.safe_load_all(sys.stdin))[-1], sys.stdout)")
	cmd.Stdin = bytes.NewReader(doc)
	out, err := cmd.Output()
	require.NoError(t, err, "PyYAML reads:\n%s", doc)
	return out
}

// Every value comes back as the same string from a YAML 1.2 loader
// (yaml.v3) and a YAML 1.1 one (PyYAML).
func TestYAMLStringRoundTrip(t *testing.T) {
	all := append(append(append([]string{}, yaml11...), plainStrings...), hostile...)
	doc := encodeStrings(t, all)
	var got map[string][]string
	require.NoError(t, yaml.Unmarshal(doc, &got))
	assert.Equal(t, all, got["values"], "YAML 1.2")

	got = nil
	require.NoError(t, json.Unmarshal(pyYAMLLoad(t, doc), &got))
	assert.Equal(t, all, got["values"], "YAML 1.1")
}

// The PyTorchJob (and TrainJob) a YAML 1.1 loader reads carries the
// program's arguments and the environment unchanged.
func TestK8sYAML11(t *testing.T) {
	args := append([]string{"train.py"}, yaml11[1:]...)
	p := build(t, threeModule, Options{Program: args, Image: "img", Env: []EnvVar{{"X", "yes"}, {"Y", "="}}})
	var b bytes.Buffer
	require.NoError(t, WriteK8s(&b, p))
	var tj struct {
		Spec struct {
			Trainer struct {
				Command []string `json:"command"`
				Env     []struct{ Name, Value string }
			} `json:"trainer"`
		} `json:"spec"`
	}
	require.NoError(t, json.Unmarshal(pyYAMLLoad(t, b.Bytes()), &tj))
	assert.Equal(t, args, tj.Spec.Trainer.Command[len(tj.Spec.Trainer.Command)-len(args):])
	b.Reset()
	require.NoError(t, WritePyTorchJob(&b, p))
	var job struct {
		Spec struct {
			Replicas map[string]struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Command []string `json:"command"`
							Env     []struct{ Name, Value string }
						} `json:"containers"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"pytorchReplicaSpecs"`
		} `json:"spec"`
	}
	require.NoError(t, json.Unmarshal(pyYAMLLoad(t, b.Bytes()), &job))
	c := job.Spec.Replicas["Master"].Template.Spec.Containers[0]
	assert.Equal(t, args, c.Command[len(c.Command)-len(args):])
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	assert.Equal(t, "yes", env["X"])
	assert.Equal(t, "=", env["Y"])
}
