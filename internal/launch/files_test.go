package launch

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestK8sFilesRefused: Files a ConfigMap cannot hold are an error of both
// Kubernetes formats, not a plan the API server refuses later.
func TestK8sFilesRefused(t *testing.T) {
	const src = "version: 1\nworld_size: 8\ncluster: {nodes: 1, gpus_per_node: 8}\nmodules:\n- {name: language, num_ranks: 8, tp: 2}\n"
	for _, tc := range []struct {
		name  string
		files []CarriedFile
		want  string
	}{
		{"key with a slash", []CarriedFile{{Name: "a/b", Data: []byte("x")}}, "not a ConfigMap key"},
		{"empty key", []CarriedFile{{Name: "", Data: []byte("x")}}, "not a ConfigMap key"},
		{"dot-dot", []CarriedFile{{Name: "..", Data: []byte("x")}}, "not a ConfigMap key"},
		{"not UTF-8", []CarriedFile{{Name: "a.bin", Data: []byte{0xff, 0xfe}}}, "not UTF-8 text"},
		{"too large", []CarriedFile{{Name: "a", Data: []byte(strings.Repeat("x", MaxConfigMapBytes))}}, "do not fit a ConfigMap"},
	} {
		for _, format := range []string{"k8s", "pytorchjob"} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				p := build(t, src, Options{Image: "img", Program: []string{"train.py"}, Files: tc.files})
				var b bytes.Buffer
				err := Write(&b, format, p)
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
			})
		}
	}
	p := build(t, src, Options{Image: "img", Program: []string{"train.py"}, Files: []CarriedFile{{Name: "a.py", Data: []byte("print(1)\n")}}})
	var b bytes.Buffer
	require.NoError(t, Write(&b, "k8s", p))
	cm, _ := k8sDocs(t, b.Bytes())
	assert.NotNil(t, cm, "the topology ConfigMap stays")
	assert.Contains(t, b.String(), "mountPath: "+K8sFilesDir)
}
