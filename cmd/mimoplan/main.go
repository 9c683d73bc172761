// Command mimoplan plans and validates heterogeneous MIMO training layouts
// for Megatron-LM. The commands live in internal/cmd; see
// docs/architecture.md.
package main

import (
	"os"

	"github.com/mimoplan/mimoplan/internal/cmd/root"
	"github.com/mimoplan/mimoplan/internal/cmdutil"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(root.Execute(cmdutil.New(version), os.Args[1:]))
}
