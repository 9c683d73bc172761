// Command limit is the format-and-write limit of docs/performance.md as a
// program: it loads a layout as mimoplan does and writes the integers that
// `mimoplan render --format FORMAT [--by rank]` would write, formatted and
// written as package limit does, to stdout. scripts/scale.sh runs it beside
// mimoplan.
//
// Usage: go run ./scripts/limit LAYOUT json|yaml|csv [rank]
package main

import (
	"fmt"
	"os"

	"github.com/mimoplan/mimoplan/internal/limit"
	"github.com/mimoplan/mimoplan/internal/validate"
)

func main() {
	if len(os.Args) < 3 || len(os.Args) > 4 || len(os.Args) == 4 && os.Args[3] != "rank" {
		fmt.Fprintln(os.Stderr, "usage: limit LAYOUT json|yaml|csv [rank]")
		os.Exit(2)
	}
	res, err := validate.Load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "limit:", err)
		os.Exit(1)
	}
	if res.Topology == nil {
		fmt.Fprintf(os.Stderr, "limit: %s fails the core rules\n", os.Args[1])
		os.Exit(1)
	}
	if _, err := limit.Write(os.Stdout, res.Topology, os.Args[2], len(os.Args) == 4); err != nil {
		fmt.Fprintln(os.Stderr, "limit:", err)
		os.Exit(1)
	}
}
