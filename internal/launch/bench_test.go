package launch

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/mimoplan/mimoplan/internal/testutil"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// BenchmarkWrite writes every plan format of the 131,072- and
// 1,048,576-rank launch layouts (16,384 and 131,072 nodes, one host each):
// time and allocation per node stay the same as the nodes grow eightfold,
// since each node is made as it is written.
func BenchmarkWrite(b *testing.B) {
	for _, ranks := range []int{131072, 1048576} {
		res, err := validate.Load(filepath.Join(testutil.RepoRoot(), "testdata", "scale", fmt.Sprintf("launch-%d.yaml", ranks)))
		if err != nil || !res.Valid(false) {
			b.Fatalf("load: %v %+v", err, res.Diags.Items)
		}
		hosts := make([]string, res.Topology.Cluster.Nodes)
		for i := range hosts {
			hosts[i] = fmt.Sprintf("node-%07d", i)
		}
		p, d, err := Build(res.Topology, Options{Hosts: hosts, MasterPort: DefaultMasterPort, Program: []string{"train.py", "--data", "/data"}, Image: "img"})
		if err != nil || d.HasErrors() {
			b.Fatalf("build: %v %+v", err, d)
		}
		for _, format := range Formats {
			b.Run(fmt.Sprintf("%d/%s", ranks, format), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := Write(io.Discard, format, p); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(p.NNodes), "ns/node")
			})
		}
	}
}
