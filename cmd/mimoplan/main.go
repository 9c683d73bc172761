// Command mimoplan plans and validates heterogeneous MIMO training layouts
// for Megatron-LM. This package only wires flags to internal packages.
package main

import (
	"os"
)

func main() {
	os.Exit(execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
