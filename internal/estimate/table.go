package estimate

import (
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

// PrintTable prints one row per estimated module, then each
// module's terms: how mimoplan's figure differs from Megatron's.
func PrintTable(w io.Writer, res *validate.Result) error {
	if err := Check(res); err != nil {
		return err
	}
	doc := Build(res)
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
		stage := "the first pipeline stage"
		if unevenSplit(&doc) {
			stage = "the busiest pipeline stage"
		}
		b.WriteString("GiB per GPU on " + stage + " (weights: with the optimizer;\n" +
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

// unevenSplit reports whether a module's figures are its busiest stage's
// (model.OffFirstStage: an uneven split's, or the last stage holding
// deferred output-layer gradients).
func unevenSplit(doc *Report) bool {
	for _, m := range doc.Modules {
		if model.OffFirstStage(m.Terms) {
			return true
		}
	}
	return false
}
