package estimatecmd

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/mimoplan/mimoplan/internal/model"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// Report is estimate's --format json document.
type Report struct {
	File           string         `json:"file"`
	GPUMemoryBytes int64          `json:"gpu_memory_bytes,omitempty"`
	Modules        []ModuleReport `json:"modules"`
	// NotEstimated names the modules without a model, or whose sizes or
	// model break a rule.
	NotEstimated []string `json:"not_estimated"`
}

// ModuleReport is one module of a Report.
type ModuleReport struct {
	Name string `json:"name"`
	// mimoplan's figures: Megatron's plus Terms.
	Parameters              int64   `json:"parameters"`
	ActiveParameters        int64   `json:"active_parameters"`
	WeightAndOptimizerBytes int64   `json:"weight_and_optimizer_bytes"`
	ActivationBytes         int64   `json:"activation_bytes"`
	OverheadBytes           int64   `json:"overhead_bytes"`
	TotalBytes              int64   `json:"total_bytes"`
	FLOPsPerSample          float64 `json:"flops_per_sample"`
	Megatron                struct {
		model.Megatron
		TotalBytes float64 `json:"total_bytes"`
	} `json:"megatron"`
	Terms    []model.Term   `json:"terms"`
	Parallel map[string]int `json:"parallel"`
	Training model.Training `json:"training"`
	// MegatronArgs are the arguments, under Megatron-LM's names, for which
	// Megatron's report prints the megatron figures.
	MegatronArgs model.Args `json:"megatron_args"`
}

func roundBytes(x float64) int64 { return int64(math.Round(x)) }

func estimateDoc(res *validate.Result) Report {
	doc := Report{File: res.Layout.File, GPUMemoryBytes: res.Layout.GPUMemory, Modules: []ModuleReport{}, NotEstimated: []string{}}
	done := map[int]bool{}
	for _, me := range res.Estimates {
		done[me.Index] = true
		e := me.Estimate
		m := ModuleReport{
			Name:                    me.Name,
			Parameters:              roundBytes(e.Megatron.Parameters),
			ActiveParameters:        roundBytes(e.Megatron.ActiveParameters),
			WeightAndOptimizerBytes: roundBytes(e.WeightAndOptimizerBytes()),
			ActivationBytes:         roundBytes(e.ActivationBytes()),
			OverheadBytes:           roundBytes(e.OverheadBytes()),
			TotalBytes:              roundBytes(e.TotalBytes()),
			FLOPsPerSample:          e.Megatron.FLOPsPerSample,
			Terms:                   e.Terms,
			Training:                me.Training,
			MegatronArgs:            model.MegatronArgs(res.Layout.Modules[me.Index].Model.Config, me.Parallel, me.Training),
		}
		if m.Terms == nil {
			m.Terms = []model.Term{}
		}
		m.Megatron.Megatron = e.Megatron
		m.Megatron.TotalBytes = e.Megatron.TotalBytes()
		p := me.Parallel
		m.Parallel = map[string]int{"num_ranks": p.NumRanks, "tp": p.TP, "gtp_remat": p.GTPRemat, "cp": p.CP, "pp": p.PP,
			"vpp": p.VPP, "dp": p.DP, "ep": p.EP, "expt_tp": p.ExptTP, "expt_gtp_remat": p.ExptGTPRemat}
		doc.Modules = append(doc.Modules, m)
	}
	for i, lm := range res.Layout.Modules {
		if !done[i] && lm.Name != "" {
			doc.NotEstimated = append(doc.NotEstimated, lm.Name)
		}
	}
	return doc
}

func printEstimateJSON(w io.Writer, res *validate.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(estimateDoc(res))
}

// printEstimateTable prints one row per estimated module, then each
// module's terms: how mimoplan's figure differs from Megatron's.
func printEstimateTable(w io.Writer, res *validate.Result) error {
	doc := estimateDoc(res)
	// Borderless, so that a table of a few modules fits 80 columns.
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.Lines{ShowHeaderLine: tw.On}},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithRowAlignment(tw.AlignRight))
	t.Header("module", "params", "active", "weights", "activ.", "overhead", "total", "Megatron", "TFLOP")
	for _, m := range doc.Modules {
		if err := t.Append(m.Name, count(float64(m.Parameters)), count(float64(m.ActiveParameters)),
			num(float64(m.WeightAndOptimizerBytes)), num(float64(m.ActivationBytes)), num(float64(m.OverheadBytes)),
			num(float64(m.TotalBytes)), num(m.Megatron.TotalBytes), fmt.Sprintf("%.1f", m.FLOPsPerSample/1e12)); err != nil {
			return err
		}
	}
	if len(doc.Modules) > 0 {
		if err := t.Render(); err != nil {
			return err
		}
	}
	var b strings.Builder
	if len(doc.Modules) > 0 {
		b.WriteString("GiB per GPU on the first pipeline stage (weights: with the optimizer;\n" +
			"Megatron: Megatron's own total); TFLOP per sample. docs/estimate.md\n")
	}
	if doc.GPUMemoryBytes > 0 {
		fmt.Fprintf(&b, "GPU memory (cluster.gpu_memory): %s\n", gib(float64(doc.GPUMemoryBytes)))
	}
	for _, m := range doc.Modules {
		mg := m.Megatron
		fmt.Fprintf(&b, "%s: Megatron's %s\n  weights %s, activations %s, total %s\n",
			m.Name, mg.ActivationFormula, gib(mg.WeightAndOptimizerBytes), gib(mg.ActivationBytes), gib(mg.TotalBytes))
		fmt.Fprintf(&b, "  micro batch %d, %s\n", m.Training.MicroBatchSize, microbatches(m.Training.NumMicrobatches))
		for _, t := range m.Terms {
			fmt.Fprintf(&b, "  %s %s (%s)\n", signed(t.Bytes), t.Name, t.Part)
		}
	}
	for _, n := range doc.NotEstimated {
		fmt.Fprintf(&b, "%s: not estimated (no model, or a rule above fails)\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func microbatches(n int) string {
	if n == 0 {
		return "no global_batch_size: pp microbatches in flight"
	}
	return fmt.Sprintf("%d microbatches per step", n)
}

// signed prints a term's bytes with its sign, in MiB below a GiB.
func signed(b float64) string {
	if math.Abs(b) < 1<<30 {
		return fmt.Sprintf("%+.1f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%+.2f GiB", b/(1<<30))
}

// num prints bytes as GiB, without the unit (the table's note gives it).
func num(b float64) string { return fmt.Sprintf("%.2f", b/(1<<30)) }

func gib(b float64) string { return fmt.Sprintf("%.2f GiB", b/(1<<30)) }

// count prints a parameter count in millions or billions.
func count(x float64) string {
	if x >= 1e9 {
		return fmt.Sprintf("%.2fB", x/1e9)
	}
	return fmt.Sprintf("%.1fM", x/1e6)
}
