package analysis

import (
	"backfire.dev/backfire/internal/exactjson"
	"encoding/base64"

	"backfire.dev/backfire/internal/index"
)

// SecretValue reads key of Secret name in namespace from the input, the
// way the controller reads a secretKeyRef arg when it creates the run
// (resolveArgs in analysis/analysis.go: the Secret of the run's
// namespace, data[key]). stringData counts as well: the API server merges
// it into data when the Secret is written. It is read from the document
// itself, so that a Secret backfire does not otherwise model costs nothing;
// a value that is not base64 is not known.
func SecretValue(ix *index.Index, namespace, name, key string) (string, bool) {
	if ix == nil {
		return "", false
	}
	o := ix.Get("Secret", namespace, name)
	if o == nil || o.Doc == nil {
		return "", false
	}
	var s struct {
		Data       map[string]string `json:"data"`
		StringData map[string]string `json:"stringData"`
	}
	if err := exactjson.Unmarshal(o.Doc.JSON, &s); err != nil {
		return "", false
	}
	if v, ok := s.StringData[key]; ok {
		return v, true
	}
	if v, ok := s.Data[key]; ok {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	return "", false
}
