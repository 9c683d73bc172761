package diff

import (
	"encoding/json"
	"io"
)

// WriteJSON prints the report as one JSON object: the changes per module
// and group kind, the ranks and the batch.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
