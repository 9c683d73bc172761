package cmdutil

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/upstream"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// LayoutFlags are the flags of every command that checks layouts.
type LayoutFlags struct {
	// TargetVersion replaces the layouts' target_version when not "".
	TargetVersion string
	// Probe checks this machine's GPUs as one node of each layout.
	Probe bool
}

// AddTargetVersionFlag adds --target-version.
func AddTargetVersionFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "target-version", "", "upstream version whose rules and argument names apply, over the layout's target_version: "+upstream.Help()+"; default the newest")
}

// Bind adds --target-version and --probe.
func (lf *LayoutFlags) Bind(fs *pflag.FlagSet) {
	AddTargetVersionFlag(fs, &lf.TargetVersion)
	AddProbeFlag(fs, &lf.Probe)
}

// Loader loads layouts the way the flags ask: at the target version
// given, from standard input for "-", with this machine's GPU checks
// added when --probe is set.
type Loader struct {
	version *upstream.Version
	gpus    *gpuprobe.Snapshot
	stdin   io.Reader
	// ProbeErr is why --probe found no GPUs (exit 3), for after the
	// layouts' own diagnostics.
	ProbeErr error
}

// NewLoader parses the target version and takes the GPU snapshot (once,
// for every layout).
func (lf LayoutFlags) NewLoader(probe func() (*gpuprobe.Snapshot, error), stdin io.Reader) (*Loader, error) {
	l := &Loader{stdin: stdin}
	if lf.TargetVersion != "" {
		v, err := upstream.Parse(lf.TargetVersion)
		if err != nil {
			return nil, exitcode.Usagef("--target-version: %v", err)
		}
		l.version = &v
	}
	if lf.Probe {
		s, err := probe()
		if err != nil {
			l.ProbeErr = exitcode.Wrap(exitcode.NoGPU, err)
		}
		l.gpus = s
	}
	return l, nil
}

// StdinOnce refuses "-" given more than once: standard input can be read
// only once, and a second read would see an empty layout.
func StdinOnce(paths []string) error {
	n := 0
	for _, p := range paths {
		if p == layout.Stdin {
			n++
		}
	}
	if n > 1 {
		return exitcode.Usagef("'-' (standard input) is given %d times: it can be read once", n)
	}
	return nil
}

// Load reads and checks one layout. The error, for input that cannot be
// read, ends the command with exit 2.
func (l *Loader) Load(path string) (*validate.Result, error) {
	res, err := validate.LoadFrom(path, l.stdin, l.version)
	if err != nil {
		return nil, exitcode.Wrap(exitcode.Usage, err)
	}
	gpuprobe.AddChecks(res, l.gpus)
	return res, nil
}

// LoadValid is Load for the commands that need a valid layout
// (launch-plan, preflight): an invalid one has its report written to
// stderr and ends the command with exit 1. Without NVML (--probe) the
// layout's own diagnostics come first, then the probe's error: exit 1
// when the layout is invalid, else 3.
func (l *Loader) LoadValid(stderr io.Writer, path string) (*validate.Result, error) {
	res, err := l.Load(path)
	if err != nil {
		return nil, err
	}
	if !res.Valid(false) {
		if err := diag.Print(stderr, []*diag.List{res.Diags}, diag.FormatText, false); err != nil {
			return nil, err
		}
		if l.ProbeErr != nil {
			fmt.Fprintf(stderr, "mimoplan: %v\n", l.ProbeErr)
		}
		return nil, exitcode.Silent(exitcode.Invalid)
	}
	if l.ProbeErr != nil {
		if err := diag.WriteText(stderr, res.Diags); err != nil {
			return nil, err
		}
		return nil, l.ProbeErr
	}
	return res, nil
}
