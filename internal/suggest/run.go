package suggest

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mimoplan/mimoplan/internal/atomicfile"
	"github.com/mimoplan/mimoplan/internal/exitcode"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/plan"
	"github.com/mimoplan/mimoplan/internal/steptime"
	"github.com/mimoplan/mimoplan/internal/upstream"
)

// Request is one run of mimoplan suggest.
type Request struct {
	// SpecPath is the spec's file; "-" reads Stdin.
	SpecPath string
	Stdin    io.Reader
	// TargetVersion, when set, replaces the spec's target_version: the
	// upstream whose rules the search applies (--target-version).
	TargetVersion *upstream.Version
	// Probe, when set, reads this machine, which replaces the spec's
	// cluster (ReadSpec).
	Probe Probe
	Top   int // 0: every valid layout
	GTP   bool
	// Step is the step-time model (steptime.Select.For builds it for the
	// spec).
	Step   steptime.Select
	Format string // table, json, yaml or html
	Out    string // when set, the best layout is written there
	// Progress, when set, gives the search's progress report and the
	// function that ends it.
	Progress func() (report func(checked, nodes int), done func())
	// MaxNodes bounds the search (plan.Request.MaxNodes; 0:
	// plan.DefaultMaxNodes).
	MaxNodes int
	// Headroom is the memory a candidate must leave free of a GPU's:
	// HeadroomFraction of gpu_memory, or HeadroomBytes when that is not
	// negative (--headroom).
	HeadroomFraction, HeadroomBytes float64
	// Width is the columns the table keeps within (0: any).
	Width int
}

// margin is the bytes a candidate must leave free of gpu GPU bytes.
func (r *Request) margin(gpu float64) float64 {
	if r.HeadroomBytes >= 0 {
		return min(r.HeadroomBytes, gpu)
	}
	return r.HeadroomFraction * gpu
}

// Run reads the spec, searches, prints the result on stdout and writes
// the best layout to Out, atomically. Exit 1 when the spec is invalid or
// nothing fits (after the closest misses).
func Run(stdout, stderr io.Writer, r Request) error {
	file, data, err := layout.ReadInput(r.SpecPath, "spec", r.Stdin)
	if err != nil {
		return exitcode.Wrap(exitcode.Usage, err)
	}
	spec, err := ReadSpec(stderr, file, data, r.Probe)
	if err != nil {
		return err
	}
	if r.TargetVersion != nil {
		spec.TargetVersion = *r.TargetVersion
	}
	req := &plan.Request{Spec: spec, Options: plan.Options{GTP: r.GTP}, Est: plan.Model{}, HW: r.Step.HW, Time: r.Step.For(spec),
		GPUMemory: float64(spec.GPUMemory), Margin: r.margin(float64(spec.GPUMemory)), Top: r.Top, MaxNodes: r.MaxNodes}
	if err := writeUnprunable(stderr, spec, maxNodes(r.MaxNodes)); err != nil {
		return err
	}
	if r.Progress != nil {
		var done func()
		req.Progress, done = r.Progress()
		defer done()
	}
	res, err := plan.Search(req)
	if err != nil {
		return exitcode.Wrap(exitcode.Invalid, err)
	}
	if r.Format == "html" {
		err = printHTML(stdout, res, spec.File, float64(spec.GPUMemory))
	} else {
		err = PrintWidth(stdout, r.Format, res, r.Width)
	}
	if err != nil {
		return err
	}
	if res.Stopped {
		if _, err := fmt.Fprintf(stderr, "mimoplan: the search stopped at --max-nodes %d search nodes (%d layouts checked): the layouts shown are the best of those visited, not of every layout; raise --max-nodes, give the modules models, or fix more sizes\n",
			maxNodes(r.MaxNodes), res.Checked); err != nil {
			return err
		}
	}
	if len(res.Candidates) == 0 {
		return exitcode.Silent(exitcode.Invalid)
	}
	if r.Out == "" {
		return nil
	}
	best := &res.Candidates[0]
	out := atomicfile.File{Path: r.Out, Mode: 0o644, Write: func(w io.Writer) error { return WriteLayout(w, data, best) }}
	var notOver []string // the spec, unless it came from standard input
	if r.SpecPath != layout.Stdin {
		notOver = []string{r.SpecPath}
	}
	if err := atomicfile.WriteFilesNotOver(notOver, out); err != nil {
		return exitcode.Wrap(exitcode.Usage, err)
	}
	return nil
}

func maxNodes(n int) int {
	if n <= 0 {
		return plan.DefaultMaxNodes
	}
	return n
}

// writeUnprunable says, before the search, which modules have no model:
// every size of such a module scores 0 s, so no bound prunes among them
// and the search may run to its --max-nodes limit.
func writeUnprunable(w io.Writer, spec *layout.Layout, limit int) error {
	var names []string
	for i := range spec.Modules {
		if spec.Modules[i].Model == nil {
			names = append(names, spec.Modules[i].Name)
		}
	}
	var err error
	switch {
	case len(names) == 0:
	case len(names) == len(spec.Modules):
		_, err = fmt.Fprintf(w, "mimoplan: note: no module has a model, so every layout scores 0 s and the search cannot prune: it tries them by their sizes and stops after %d search nodes (--max-nodes); give each module a model (model: {preset: ...} or hf_config) to rank them by time, or fix sizes (num_ranks, tp, pp, ...) to narrow the search\n", limit)
	default:
		_, err = fmt.Fprintf(w, "mimoplan: note: no model in module(s) %s, so their sizes score 0 s and prune nothing; the search stops after %d search nodes (--max-nodes); give them a model (model: {preset: ...} or hf_config) or fix their sizes\n",
			quoteAll(names), limit)
	}
	return err
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
