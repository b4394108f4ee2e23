// Package exactjson decodes JSON into Go structs as the API server does:
// field names matched case-sensitively. encoding/json matches them
// case-insensitively, so a `Data:` or `Spec:` key written beside the real
// one (which Kubernetes drops as an unknown field) would be read as the
// real field. Decoding into maps and `any` is exact either way; use this
// for struct targets.
package exactjson

import kjson "sigs.k8s.io/json"

// Unmarshal decodes data into v, matching field names exactly and keeping
// integers as int64 where v holds `any` (as the API server's decoder,
// k8s.io/apimachinery pkg/runtime/serializer/json, does).
func Unmarshal(data []byte, v any) error {
	return kjson.UnmarshalCaseSensitivePreserveInts(data, v)
}
