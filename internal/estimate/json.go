package estimate

import (
	"encoding/json"
	"io"

	"github.com/mimoplan/mimoplan/internal/validate"
)

// PrintJSON writes res's Report as indented JSON.
func PrintJSON(w io.Writer, res *validate.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Build(res))
}
