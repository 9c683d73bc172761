package render

import (
	"bufio"
	"io"

	"github.com/mimoplan/mimoplan/internal/topo"
)

// RenderRankOracle writes --rank's json or yaml as encoding/json and
// yaml.v3 write rankDoc, the document streamRank streams.
func RenderRankOracle(w io.Writer, t *topo.Topology, o Options) error {
	sel, err := selectFrom(t, o)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if err := newRankDoc(t, o.Rank, rankEntries(sel, o.Rank)).write(bw, o.Format); err != nil {
		return err
	}
	return bw.Flush()
}
