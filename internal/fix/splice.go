package fix

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// Patched is Apply for a document that is decoded again and never printed:
// the same object as Apply makes, but only the smallest subtrees the patch
// reaches are decoded, merged and encoded again; the rest of the document
// is kept byte for byte (so its keys keep their order, where Apply sorts
// them). The scan patches every object whose fixes depend on each other's
// (fixcompose), and a whole-document merge cost more than the rules it
// feeds.
//
// The descent follows what the strategic merge patch itself does at each
// level (strategicpatch's mergeMap): a map value merges into the map it
// names, and a list merged by key merges each item into the item of the
// same key. Where the patch does anything else at a level (sets or deletes
// a value, adds a key or an item, carries a directive, or meets a field
// whose strategy replaces or retains keys), that level is patched whole by
// strategicpatch itself, as Apply would.
func Patched(doc []byte, patch map[string]any, typed any) ([]byte, error) {
	if typed == nil {
		b, err := json.Marshal(patch)
		if err != nil {
			return nil, err
		}
		return jsonpatch.MergePatch(doc, b)
	}
	schema, err := strategicpatch.NewPatchMetaFromStruct(typed)
	if err != nil {
		return nil, err
	}
	return splice(doc, patch, schema)
}

// splice patches the JSON object doc with patch (see Patched).
func splice(doc []byte, patch map[string]any, schema strategicpatch.LookupPatchMeta) ([]byte, error) {
	es, ok, err := edits(doc, patch, schema)
	if err != nil {
		return nil, err
	}
	if !ok {
		return whole(doc, patch, schema)
	}
	if len(es) == 0 {
		return doc, nil
	}
	slices.SortFunc(es, func(a, b edit) int { return a.start - b.start })
	size := len(doc)
	for _, e := range es {
		size += len(e.value) - (e.end - e.start)
	}
	out := make([]byte, 0, size)
	at := 0
	for _, e := range es {
		out = append(out, doc[at:e.start]...)
		out = append(out, e.value...)
		at = e.end
	}
	return append(out, doc[at:]...), nil
}

// whole patches doc at this level as strategicpatch does.
func whole(doc []byte, patch map[string]any, schema strategicpatch.LookupPatchMeta) ([]byte, error) {
	b, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	return strategicpatch.StrategicMergePatchUsingLookupPatchMeta(doc, b, schema)
}

// An edit replaces doc[start:end] with value.
type edit struct {
	start, end int
	value      []byte
}

// edits returns the replacements of doc's values that patch makes, or
// false when this level must be patched whole.
func edits(doc []byte, patch map[string]any, schema strategicpatch.LookupPatchMeta) ([]edit, bool, error) {
	if len(patch) == 0 {
		return nil, true, nil
	}
	members, ok := objectMembers(doc)
	if !ok {
		return nil, false, nil
	}
	var out []edit
	for k, v := range patch {
		if strings.HasPrefix(k, "$") {
			return nil, false, nil
		}
		at, ok := find(members, k)
		if !ok {
			return nil, false, nil
		}
		value := doc[at.start:at.end]
		switch v := v.(type) {
		case map[string]any:
			sub, meta, err := schema.LookupPatchMetadataForStruct(k)
			if s, ok := strategy(meta); err != nil || !ok || s == "replace" || value[0] != '{' {
				return nil, false, nil
			}
			b, err := splice(value, v, sub)
			if err != nil {
				return nil, false, err
			}
			out = append(out, edit{at.start, at.end, b})
		case []any:
			items, ok, err := itemEdits(value, v, k, schema)
			if err != nil || !ok {
				return nil, ok, err
			}
			for _, e := range items {
				out = append(out, edit{at.start + e.start, at.start + e.end, e.value})
			}
		default:
			return nil, false, nil
		}
	}
	return out, true, nil
}

// itemEdits returns the replacements, within the list value, of the items
// that the patch's items merge into: each patch item must name by the
// list's merge key exactly one item of the list, in the list's order (the
// merge keeps it then; patch items out of order reorder the list).
func itemEdits(value []byte, patch []any, key string, schema strategicpatch.LookupPatchMeta) ([]edit, bool, error) {
	sub, meta, err := schema.LookupPatchMetadataForSlice(key)
	if err != nil || value[0] != '[' {
		return nil, false, nil
	}
	mergeKey := meta.GetPatchMergeKey()
	if s, ok := strategy(meta); !ok || s != "merge" || mergeKey == "" {
		return nil, false, nil
	}
	items, ok := arrayItems(value)
	if !ok {
		return nil, false, nil
	}
	names := make([]string, len(items))
	named := make([]bool, len(items))
	for i, it := range items {
		item := value[it.start:it.end]
		if item[0] != '{' {
			return nil, false, nil
		}
		ms, ok := objectMembers(item)
		if !ok {
			return nil, false, nil
		}
		if at, ok := find(ms, mergeKey); ok {
			name, ok := stringValue(item[at.start:at.end])
			if !ok {
				return nil, false, nil // a merge key that is not a string
			}
			names[i], named[i] = name, true
		}
	}
	var out []edit
	last := -1
	for _, p := range patch {
		pm, ok := p.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		name, ok := pm[mergeKey].(string)
		if !ok {
			return nil, false, nil
		}
		at := -1
		for i := range items {
			if named[i] && names[i] == name {
				if at >= 0 {
					return nil, false, nil // two items of that name
				}
				at = i
			}
		}
		if at <= last {
			return nil, false, nil // a new item, or out of the list's order
		}
		last = at
		rest := make(map[string]any, len(pm)-1)
		for k, v := range pm {
			if strings.HasPrefix(k, "$") {
				return nil, false, nil // $patch on an item acts on the list
			}
			if k != mergeKey {
				rest[k] = v
			}
		}
		it := items[at]
		b, err := splice(value[it.start:it.end], rest, sub)
		if err != nil {
			return nil, false, err
		}
		out = append(out, edit{it.start, it.end, b})
	}
	return out, true, nil
}

// strategy is a field's patch strategy, the retainKeys strategy aside
// (it acts only with a $retainKeys directive, which is patched whole), as
// strategicpatch reads it; false where it refuses the field's strategies.
func strategy(meta strategicpatch.PatchMeta) (string, bool) {
	var out []string
	for _, s := range meta.GetPatchStrategies() {
		if s != "retainKeys" {
			out = append(out, s)
		}
	}
	switch {
	case len(out) == 0:
		return "", true
	case len(out) == 1 && len(meta.GetPatchStrategies()) <= 2:
		return out[0], true
	}
	return "", false
}

// A member is one key of a JSON object and where its value is.
type member struct {
	key        string
	start, end int
}

// find returns where key's value is, false when key is missing.
func find(ms []member, key string) (member, bool) {
	for _, m := range ms {
		if m.key == key {
			return m, true
		}
	}
	return member{}, false
}

// objectMembers lists the members of the JSON object b, false when b is
// not one or names a key twice (which decoding would settle by keeping the
// last).
func objectMembers(b []byte) ([]member, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	var ms []member
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil, true
	}
	for i < len(b) {
		end, ok := skipString(b, i)
		if !ok {
			return nil, false
		}
		key, ok := stringValue(b[i:end])
		if !ok {
			return nil, false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		vend, ok := skipValue(b, i)
		if !ok {
			return nil, false
		}
		if _, dup := find(ms, key); dup {
			return nil, false
		}
		ms = append(ms, member{key, i, vend})
		i = skipSpace(b, vend)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == '}' {
			return ms, true
		}
		if b[i] != ',' {
			return nil, false
		}
		i = skipSpace(b, i+1)
	}
	return nil, false
}

// arrayItems returns where the items of the JSON array b are.
func arrayItems(b []byte) ([]edit, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	var items []edit
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil, true
	}
	for i < len(b) {
		end, ok := skipValue(b, i)
		if !ok {
			return nil, false
		}
		items = append(items, edit{start: i, end: end})
		i = skipSpace(b, end)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == ']' {
			return items, true
		}
		if b[i] != ',' {
			return nil, false
		}
		i = skipSpace(b, i+1)
	}
	return nil, false
}

// stringValue decodes the JSON string s.
func stringValue(s []byte) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s[1 : len(s)-1]), true
	}
	var out string
	err := json.Unmarshal(s, &out)
	return out, err == nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the JSON string that starts at b[i].
func skipString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return i, false
}

// skipValue returns the end of the JSON value that starts at b[i]. It
// finds the value's extent, not whether it is valid: what is patched is
// decoded after, and the parts not patched were decoded before.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '{', '[':
				depth++
				i++
			case '}', ']':
				depth--
				i++
				if depth == 0 {
					return i, true
				}
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return i, false
				}
				i = end
			default:
				i++
			}
		}
		return i, false
	default:
		start := i
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\t' && b[i] != '\r' {
			i++
		}
		return i, i > start
	}
}
