package preflight_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/preflight"
	"github.com/mimoplan/mimoplan/internal/render"
	"github.com/mimoplan/mimoplan/internal/testutil"
)

// podParts collects, anywhere in a decoded job, the configMap volumes
// (volume name -> ConfigMap name), the mounts of each container (by the
// volume they mount) and the command lines.
func podParts(v any, vols map[string]string, mounts *[]map[string]any, cmds *[][]string) {
	switch x := v.(type) {
	case map[string]any:
		if cm, ok := x["configMap"].(map[string]any); ok {
			vols[x["name"].(string)] = cm["name"].(string)
		}
		if _, ok := x["mountPath"]; ok {
			*mounts = append(*mounts, x)
		}
		if c, ok := x["command"].([]any); ok {
			var argv []string
			for _, w := range c {
				argv = append(argv, w.(string))
			}
			*cmds = append(*cmds, argv)
		}
		for _, c := range x {
			podParts(c, vols, mounts, cmds)
		}
	case []any:
		for _, c := range x {
			podParts(c, vols, mounts, cmds)
		}
	}
}

// TestEmitK8sCarriesPayload: preflight --emit DIR --format k8s|pytorchjob
// carries preflight.py and plan.json in a ConfigMap mounted in the pods,
// the job validates against its vendored CRD schema, and the command line
// names the payload and plan where the pods mount them, not under DIR.
func TestEmitK8sCarriesPayload(t *testing.T) {
	res := load(t, "testdata/two-nodes-2x2.yaml")
	plan := planOf(t, res)
	for _, format := range []string{"k8s", "pytorchjob"} {
		t.Run(format, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pf")
			r := preflight.Request{Emit: dir, Format: format, Image: "img", Bytes: "64MiB", Entrypoint: "torchrun", MasterPortText: "29500",
				Options:   preflight.Options{Timeout: preflight.DefaultTimeout, Iters: preflight.DefaultIters},
				WritePlan: func(w io.Writer) error { return render.JSON(w, res.Topology) }}
			lo, err := r.Check()
			require.NoError(t, err)
			var out, errOut bytes.Buffer
			require.NoError(t, preflight.Execute(context.Background(), &out, &errOut, res.Topology, &diag.List{}, r, lo), errOut.String())
			y, err := os.ReadFile(strings.TrimSpace(out.String()))
			require.NoError(t, err)
			cms, job := testutil.K8sDocs(t, y)

			var files map[string]any
			for name, cm := range cms {
				if strings.HasSuffix(name, "-files") {
					files = cm["data"].(map[string]any)
					vols := map[string]string{}
					var mounts []map[string]any
					var cmds [][]string
					podParts(job, vols, &mounts, &cmds)
					var vol string
					for v, c := range vols {
						if c == name {
							vol = v
						}
					}
					require.NotEmpty(t, vol, "a volume of ConfigMap %s", name)
					n := 0
					for _, m := range mounts {
						if m["name"] == vol {
							n++
							assert.Equal(t, launch.K8sFilesDir, m["mountPath"])
						}
					}
					require.Positive(t, n, "the pods mount %s", vol)
					require.NotEmpty(t, cmds)
					if format == "pytorchjob" { // Master and Worker: each container mounts them
						assert.Equal(t, len(cmds), n)
					}
					for _, c := range cmds {
						cmd := strings.Join(c, " ")
						assert.Contains(t, cmd, " "+launch.K8sFilesDir+"/"+preflight.PayloadFile+" --plan "+launch.K8sFilesDir+"/"+preflight.PlanFile+" ")
						assert.NotContains(t, cmd, dir, "the pods need not have DIR")
					}
				}
			}
			require.NotNil(t, files, "a ConfigMap of the files in %s", y)
			assert.Equal(t, string(preflight.Payload), files[preflight.PayloadFile])
			assert.Equal(t, string(plan), files[preflight.PlanFile])
			// DIR still gets its copies, for the other formats and a look.
			assert.FileExists(t, filepath.Join(dir, preflight.PayloadFile))
		})
	}
}

// TestEmitK8sLargePlan: a plan.json too large for a ConfigMap is read
// from DIR, and the plan's notes say that DIR must be in every pod.
func TestEmitK8sLargePlan(t *testing.T) {
	tmp := t.TempDir()
	path := writeFile(t, tmp, "big.yaml", "version: 1\nworld_size: 16384\ncluster: {nodes: 2048, gpus_per_node: 8}\nmodules:\n  - {name: language, num_ranks: 16384, tp: 8, pp: 4}\n")
	res := load(t, path)
	dir := filepath.Join(tmp, "pf")
	r := preflight.Request{Emit: dir, Format: "pytorchjob", Image: "img", Bytes: "64MiB", Entrypoint: "torchrun", MasterPortText: "29500",
		Options:   preflight.Options{Timeout: preflight.DefaultTimeout, Iters: preflight.DefaultIters},
		WritePlan: func(w io.Writer) error { return render.JSON(w, res.Topology) }}
	lo, err := r.Check()
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	require.NoError(t, preflight.Execute(context.Background(), &out, &errOut, res.Topology, &diag.List{}, r, lo), errOut.String())
	plan, err := os.Stat(filepath.Join(dir, preflight.PlanFile))
	require.NoError(t, err)
	require.Greater(t, plan.Size(), int64(launch.MaxConfigMapBytes), "the case is one a ConfigMap cannot hold")
	y, err := os.ReadFile(strings.TrimSpace(out.String()))
	require.NoError(t, err)
	cms, job := testutil.K8sDocs(t, y)
	for name := range cms {
		assert.False(t, strings.HasSuffix(name, "-files"), name)
	}
	vols := map[string]string{}
	var mounts []map[string]any
	var cmds [][]string
	podParts(job, vols, &mounts, &cmds)
	require.NotEmpty(t, cmds)
	for _, c := range cmds {
		assert.Contains(t, strings.Join(c, " "), " "+filepath.Join(dir, preflight.PayloadFile)+" --plan "+filepath.Join(dir, preflight.PlanFile)+" ")
	}
	notes := job["metadata"].(map[string]any)["annotations"].(map[string]any)["mimoplan/notes"].(string)
	assert.Contains(t, notes, "exceed a ConfigMap's")
	assert.Contains(t, notes, dir+", which must be mounted at that path in every pod")
}
