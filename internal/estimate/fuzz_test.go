package estimate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/mimoplan/mimoplan/internal/estimate"
	"github.com/mimoplan/mimoplan/internal/layout"
	"github.com/mimoplan/mimoplan/internal/validate"
)

// FuzzEstimate: whatever model sizes a layout may hold (each up to the
// parser's 2^24), estimate prints no negative, NaN or infinite figure: it
// refuses the model with a clear error (estimate.Check) or every figure of
// its report is a finite number, the counts and bytes at least 0.
func FuzzEstimate(f *testing.F) {
	f.Add(uint32(32), uint32(4096), uint32(32), uint32(8), uint32(4096), uint32(128256), uint32(14336), uint32(0), uint16(2), uint16(2), uint16(1))
	f.Add(uint32(1<<24), uint32(1<<24), uint32(1), uint32(1), uint32(1<<24), uint32(1<<24), uint32(1<<24), uint32(0), uint16(1), uint16(1), uint16(1))
	f.Add(uint32(1), uint32(1), uint32(1), uint32(1), uint32(1), uint32(1), uint32(1), uint32(8), uint16(1), uint16(1), uint16(1))
	f.Add(uint32(1<<24), uint32(8), uint32(8), uint32(1), uint32(1<<24), uint32(1<<24), uint32(1<<24), uint32(1<<24), uint16(8), uint16(1), uint16(1))
	f.Fuzz(func(t *testing.T, layers, hidden, heads, groups, seq, vocab, ffn, experts uint32, tp, pp, mbs uint16) {
		dim := func(v uint32) uint32 { return max(1, v%(1<<24+1)) }
		size := func(v uint16) int { return 1 << (v % 4) }
		model := fmt.Sprintf("{num_layers: %d, hidden_size: %d, num_attention_heads: %d, num_query_groups: %d, seq_length: %d, vocab_size: %d, ffn_hidden_size: %d",
			dim(layers), dim(hidden), dim(heads), dim(groups), dim(seq), dim(vocab), dim(ffn))
		if e := experts % (1<<24 + 1); e > 1 {
			model += fmt.Sprintf(", num_experts: %d", e)
		}
		model += "}"
		t1, p1 := size(tp), size(pp)
		n := t1 * p1
		src := fmt.Sprintf("version: 1\nworld_size: %d\nbatch: {micro_batch_size: %d}\nmodules:\n  - name: language\n    num_ranks: %d\n    tp: %d\n    pp: %d\n    model: %s\n",
			n, size(mbs), n, t1, p1, model)
		l, d := layout.Parse("f.yaml", []byte(src))
		res := validate.Check(l, d)
		if err := estimate.Check(res); err != nil {
			return
		}
		var out bytes.Buffer
		if err := estimate.PrintJSON(&out, res); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Modules []map[string]any `json:"modules"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("estimate json: %v\n%s", err, out.String())
		}
		for _, m := range doc.Modules {
			for _, k := range []string{"parameters", "active_parameters", "weight_and_optimizer_bytes", "activation_bytes", "overhead_bytes", "total_bytes", "flops_per_sample"} {
				v, ok := m[k].(float64)
				if !ok || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s = %v in\n%s\nfrom\n%s", k, m[k], out.String(), src)
				}
			}
		}
		var table bytes.Buffer
		if err := estimate.PrintTable(&table, res); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"NaN", "Inf"} {
			if bytes.Contains(table.Bytes(), []byte(bad)) {
				t.Fatalf("the table prints %s:\n%s", bad, table.String())
			}
		}
	})
}
