// Package cmdutil holds what every command shares: the Factory that hands
// a command its streams and the machine's probes, the configuration layer
// (flags, MIMOPLAN_* variables and the config file, through viper), and
// flag helpers. It wires; it decides nothing about layouts.
package cmdutil

import (
	"io"
	"os"

	"github.com/mimoplan/mimoplan/internal/gpuprobe"
)

// IOStreams are a command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Factory gives commands what they take from the world outside: the
// streams, this machine's GPUs and where the user's configuration lives.
// Tests build one with stand-ins; nothing here is a package variable.
type Factory struct {
	IOStreams *IOStreams
	// Version is the binary's version, for --version.
	Version string
	// ProbeLocal takes a snapshot of this machine's GPUs through NVML.
	ProbeLocal func() (*gpuprobe.Snapshot, error)
	// ConfigDir is the user's configuration directory, in which
	// mimoplan/config.yaml is looked for ($XDG_CONFIG_HOME, else
	// ~/.config).
	ConfigDir func() (string, error)
}

// New returns the Factory of the real binary.
func New(version string) *Factory {
	return &Factory{
		IOStreams:  &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
		Version:    version,
		ProbeLocal: gpuprobe.ProbeLocal,
		ConfigDir:  os.UserConfigDir,
	}
}
