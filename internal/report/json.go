package report

import (
	"encoding/json"
	"io"

	"backfire.dev/backfire/internal/result"
)

// JSON writes the result as one JSON document (schema backfire/v1).
func JSON(w io.Writer, r *result.Result, opts JSONOptions) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(jsonDocument(r, opts))
}
