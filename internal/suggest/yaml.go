package suggest

import (
	"io"

	"go.yaml.in/yaml/v3"

	"github.com/mimoplan/mimoplan/internal/plan"
)

// printYAML writes res as yaml.v3 writes it, indented by two.
func printYAML(w io.Writer, res *plan.Result) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(res); err != nil {
		return err
	}
	return enc.Close()
}
