package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mimoplan/mimoplan/internal/testutil"
)

// BenchmarkScaleWithModels: the whole estimate and validate commands
// (parse, every rule, the models' estimates) on layouts/scale-131072.yaml,
// whose two modules carry models. docs/performance.md keeps the figures;
// the target is under 0.2 s each.
func BenchmarkScaleWithModels(b *testing.B) {
	path := testutil.Layout("scale-131072.yaml")
	for _, args := range [][]string{
		{"estimate", path},
		{"estimate", "--format", "json", path},
		{"validate", path},
	} {
		b.Run(strings.Join(args[:len(args)-1], "_"), func(b *testing.B) {
			for b.Loop() {
				var out, errb bytes.Buffer
				if code := execute(args, strings.NewReader(""), &out, &errb); code != 0 {
					b.Fatalf("exit %d: %s", code, errb.String())
				}
			}
		})
	}
}
