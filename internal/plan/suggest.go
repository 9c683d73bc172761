package plan

import (
	"io"

	"github.com/mimoplan/mimoplan/internal/atomicfile"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/gpuprobe"
	"github.com/mimoplan/mimoplan/internal/layout"
)

// SuggestRequest is one run of mimoplan suggest.
type SuggestRequest struct {
	SpecPath string
	// Probe, when set, reads this machine, which replaces the spec's
	// cluster (ReadSpec).
	Probe  func() (*gpuprobe.Snapshot, error)
	Top    int // 0: every valid layout
	GTP    bool
	HW     Hardware
	Format string // table, json or yaml
	Out    string // when set, the best layout is written there
	// Progress, when set, gives the search's progress report and the
	// function that ends it.
	Progress func() (report func(checked int), done func())
}

// Suggest reads the spec, searches, prints the result on stdout and writes
// the best layout to Out, atomically. Exit 1 when the spec is invalid or
// nothing fits (after the closest misses).
func Suggest(stdout, stderr io.Writer, r SuggestRequest) error {
	data, err := layout.ReadRegular(r.SpecPath, "spec")
	if err != nil {
		return exitcode.Wrap(exitcode.Usage, err)
	}
	spec, err := ReadSpec(stderr, r.SpecPath, data, r.Probe)
	if err != nil {
		return err
	}
	req := &Request{Spec: spec, Options: Options{GTP: r.GTP, Layers: Layers}, Est: Model{}, HW: r.HW,
		GPUMemory: float64(spec.GPUMemory), Top: r.Top}
	if r.Progress != nil {
		var done func()
		req.Progress, done = r.Progress()
		defer done()
	}
	res, err := Search(req)
	if err != nil {
		return exitcode.Wrap(exitcode.Invalid, err)
	}
	if err := Print(stdout, r.Format, res); err != nil {
		return err
	}
	if len(res.Candidates) == 0 {
		return exitcode.Silent(exitcode.Invalid)
	}
	if r.Out == "" {
		return nil
	}
	best := &res.Candidates[0]
	if err := atomicfile.WriteFile(r.Out, 0o644, func(w io.Writer) error { return WriteLayout(w, data, best) }); err != nil {
		return exitcode.Wrap(exitcode.Usage, err)
	}
	return nil
}
