package estimate

import (
	"encoding/json"
	"io"

	"github.com/mimoplan/mimoplan/internal/validate"
)

// PrintJSON writes res's Report as indented JSON, after Check.
func PrintJSON(w io.Writer, res *validate.Result) error {
	if err := Check(res); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Build(res))
}
