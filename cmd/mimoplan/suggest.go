package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
	"golang.org/x/term"

	"github.com/mimoplan/mimoplan/internal/diag"
	"github.com/mimoplan/mimoplan/internal/launch"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/plan"
)

func init() { register(newSuggestCmd) }

var suggestFormats = []string{"table", "json", "yaml"}

// suggestOptions are suggest's flags, read once.
type suggestOptions struct {
	Spec   string
	Top    int
	All    bool
	Format string
	Out    string
	GTP    bool
	HW     plan.Hardware
}

func newSuggestCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "suggest SPEC",
		Short: "Search every valid layout for a cluster and models, best first",
		Long: `Read a spec (a layout whose modules may leave num_ranks, rank_offset and
their parallel sizes open, with constraints colocated, max_tp and
align: node) and print the layouts it allows that pass every rule of the
target and fit GPU memory, ranked by an estimated time per global batch
whose parts are shown (docs/suggest.md).

  mimoplan suggest spec.yaml                       the best 5, as a table
  mimoplan suggest spec.yaml --all --format json   every valid layout
  mimoplan suggest spec.yaml --out layout.yaml     write the best as a layout

Exit codes: 0 at least one layout fits, 1 the spec is invalid or nothing
fits (the closest misses are printed with what blocks each), 2 usage error.`,
		Args: cobra.ExactArgs(1),
	}
	f := cmd.Flags()
	f.Int("top", 5, "how many layouts to show")
	f.Bool("all", false, "show every valid layout")
	f.String("format", "table", "output format: "+strings.Join(suggestFormats, ", "))
	f.String("out", "", "write the best layout to this file")
	f.Bool("gtp", false, "also search gtp_remat and expt_gtp_remat where the spec leaves them out")
	f.String("gpu", "H100", "GPU whose defaults the step-time model uses: H100, H200, B200")
	f.Float64("peak-tflops", 0, "dense BF16 TFLOP/s per GPU (default: the --gpu's)")
	f.Float64("efficiency", 0, "fraction of the peak reached, 0-1 (default 0.4)")
	f.Float64("nvlink-gbps", 0, "GB/s per GPU inside a node (default: the --gpu's)")
	f.Float64("network-gbps", 0, "GB/s per GPU across nodes (default 50)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o, err := readSuggestOptions(cmd, args[0])
		if err != nil {
			return err
		}
		return runSuggest(o, cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	return cmd
}

func readSuggestOptions(cmd *cobra.Command, spec string) (*suggestOptions, error) {
	v := config(cmd)
	o := &suggestOptions{Spec: spec, Top: v.GetInt("top"), All: v.GetBool("all"), Format: v.GetString("format"), Out: v.GetString("out"), GTP: v.GetBool("gtp")}
	if err := oneOf("format", o.Format, suggestFormats...); err != nil {
		return nil, err
	}
	if o.Top < 1 {
		return nil, usageErr("invalid --top %d: want at least 1", o.Top)
	}
	gpu := strings.ToUpper(v.GetString("gpu"))
	hw, ok := plan.GPUs[gpu]
	if !ok {
		return nil, usageErr("invalid --gpu %q: want one of H100, H200, B200", v.GetString("gpu"))
	}
	for _, s := range []struct {
		flag  string
		dst   *float64
		scale float64
	}{{"peak-tflops", &hw.PeakFLOPs, 1e12}, {"efficiency", &hw.Efficiency, 1}, {"nvlink-gbps", &hw.NVLink, 1e9}, {"network-gbps", &hw.Network, 1e9}} {
		if x := v.GetFloat64(s.flag); cmd.Flags().Changed(s.flag) || x != 0 {
			*s.dst = x * s.scale
		}
	}
	if err := hw.Check(); err != nil {
		return nil, usageErr("%v", err)
	}
	o.HW = hw
	return o, nil
}

func runSuggest(o *suggestOptions, stdout, stderr io.Writer) error {
	data, err := readSpec(o.Spec)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	spec, d := layout.ParseSpec(o.Spec, data)
	if d.HasErrors() {
		if err := diag.WriteText(stderr, d); err != nil {
			return err
		}
		return silentExit(exitInvalid)
	}
	req := &plan.Request{Spec: spec, Options: plan.Options{GTP: o.GTP, Layers: layers}, Est: estimator{}, HW: o.HW, GPUMemory: gpuMemory(spec)}
	if !o.All {
		req.Top = o.Top
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		start := time.Now()
		req.Progress = func(n int) {
			if time.Since(start) > time.Second {
				fmt.Fprintf(stderr, "\rmimoplan: %d layouts checked ...", n)
			}
		}
		defer func() {
			if time.Since(start) > time.Second {
				fmt.Fprint(stderr, "\r\033[K")
			}
		}()
	}
	res, err := plan.Search(req)
	if err != nil {
		return &exitError{code: exitInvalid, err: err}
	}
	if err := printSuggestions(stdout, o.Format, res); err != nil {
		return err
	}
	if len(res.Candidates) == 0 {
		return silentExit(exitInvalid)
	}
	if o.Out != "" {
		best := &res.Candidates[0]
		if err := launch.WriteFile(o.Out, 0o644, func(w io.Writer) error { return plan.WriteLayout(w, data, best) }); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
	}
	return nil
}

func readSpec(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, layout.MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read spec %s: %w", path, err)
	}
	return data, nil
}

func printSuggestions(w io.Writer, format string, res *plan.Result) error {
	switch format {
	case "json":
		if res.Candidates == nil {
			res.Candidates = []plan.Candidate{}
		}
		enc := json.NewEncoder(w)
		return enc.Encode(res)
	case "yaml":
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		if err := enc.Encode(res); err != nil {
			return err
		}
		return enc.Close()
	}
	if len(res.Candidates) == 0 {
		return printMisses(w, res.Misses)
	}
	return printSuggestTable(w, res.Candidates)
}

func printMisses(w io.Writer, ms []plan.Miss) error {
	fmt.Fprintln(w, "no layout fits; the closest misses:")
	for i, m := range ms {
		fmt.Fprintf(w, "%d. %s\n", i+1, describeChoices(m.Modules))
		for _, b := range m.Blocks {
			fmt.Fprintf(w, "   - %s\n", b)
		}
	}
	if len(ms) == 0 {
		_, err := fmt.Fprintln(w, "   (the spec's constraints allow no placement at all: check num_ranks, rank_offset, align and colocated)")
		return err
	}
	return nil
}

// describeChoices writes a candidate's modules on one line.
func describeChoices(cs []plan.Choice) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s [%d,%d) %s", c.Name, c.RankOffset, c.RankOffset+c.NumRanks, sizesText(&c))
	}
	return strings.Join(parts, "; ")
}

func sizesText(c *plan.Choice) string {
	s := fmt.Sprintf("tp%d cp%d pp%d", c.TP, c.CP, c.PP)
	if c.VPP > 0 {
		s += fmt.Sprintf(" vpp%d", c.VPP)
	}
	s += fmt.Sprintf(" dp%d", c.DP)
	if c.EP > 1 || c.ExptTP > 1 {
		s += fmt.Sprintf(" ep%d etp%d", c.EP, c.ExptTP)
	}
	if c.GTPRemat > 1 || c.ExptGTPRemat > 1 {
		s += fmt.Sprintf(" gtp%d egtp%d", c.GTPRemat, c.ExptGTPRemat)
	}
	return s
}
