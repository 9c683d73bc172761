package render

import (
	"bufio"
	"io"
	"math"

	"github.com/mimoplan/mimoplan/internal/topo"
)

// RenderRankVia renders --rank as Render does, through rankDoc when
// plain and the streamed writer otherwise, whatever the size.
func RenderRankVia(w io.Writer, t *topo.Topology, o Options, plain bool) error {
	sel, err := selectFrom(t, o)
	if err != nil {
		return err
	}
	limit := -1
	if plain {
		limit = math.MaxInt
	}
	bw := bufio.NewWriter(w)
	if err := renderRank(bw, t, sel, o, limit); err != nil {
		return err
	}
	return bw.Flush()
}
