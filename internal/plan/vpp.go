package plan

import "github.com/mimoplan/mimoplan/internal/layout"

// vppGiven reports a vpp the spec fixes.
func vppGiven(*layout.Module) (bool, int) { return false, 0 }

// setVPP sets a layout module's vpp.
func setVPP(*layout.Module, int) {}
