package yamledit

import "encoding/json"

// The decoded JSON a patch is: maps, lists, and scalars as encoding/json
// reads them.

// probeHandlers are the keys of a probe that say what it checks.
var probeHandlers = []string{"exec", "httpGet", "tcpSocket", "grpc"}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func show(v any) string {
	if v == nil {
		return "null (deleted)"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func equal(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
