package fix

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"backfire.dev/backfire/internal/jsonenc"
	"backfire.dev/backfire/internal/load"
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
// names, a list merged by key merges each item into the item of the same
// key, and the level's own few rules (see merge) are done on the JSON.
// Where the patch carries a directive, meets a field whose strategy
// replaces, or adds to, reorders or would sort a keyed list, that level is
// patched whole by strategicpatch itself, as Apply would.
func Patched(doc []byte, patch map[string]any, typed any) ([]byte, error) {
	if typed == nil {
		b, err := jsonenc.Marshal(patch)
		if err != nil {
			return nil, err
		}
		return jsonpatch.MergePatch(doc, b)
	}
	schema, err := strategicpatch.NewPatchMetaFromStruct(typed)
	if err != nil {
		return nil, err
	}
	es, err := patchObject(doc, 0, len(doc), patch, schema)
	if err != nil {
		return nil, err
	}
	size := len(doc)
	for _, e := range es {
		size += len(e.value) - (e.end - e.start)
	}
	return applyEdits(make([]byte, 0, size), doc, 0, len(doc), es), nil
}

// An edit replaces doc[start:end] with value.
type edit struct {
	start, end int
	value      []byte
}

// applyEdits appends doc[start:end] to out with the edits, which lie in it
// in order, made.
func applyEdits(out, doc []byte, start, end int, es []edit) []byte {
	for _, e := range es {
		out = append(out, doc[start:e.start]...)
		out = append(out, e.value...)
		start = e.end
	}
	return append(out, doc[start:end]...)
}

// patchObject returns, in order, the edits that patch makes to the JSON
// object doc[start:end] (see Patched).
func patchObject(doc []byte, start, end int, patch map[string]any, schema strategicpatch.LookupPatchMeta) ([]edit, error) {
	es, ok, err := merge(doc, start, end, patch, schema)
	if err != nil || ok {
		return es, err
	}
	b, err := whole(doc[start:end], patch, schema)
	if err != nil {
		return nil, err
	}
	return []edit{{start, end, b}}, nil
}

// whole patches doc at this level as strategicpatch does.
func whole(doc []byte, patch map[string]any, schema strategicpatch.LookupPatchMeta) ([]byte, error) {
	b, err := jsonenc.Marshal(patch)
	if err != nil {
		return nil, err
	}
	return strategicpatch.StrategicMergePatchUsingLookupPatchMeta(doc, b, schema)
}

// merge is one level of strategicpatch's mergeMap on the JSON object
// doc[start:end], false where it is left to strategicpatch (see Patched):
// for each key of the patch, null deletes the key; a value the document
// lacks, or holds with another type, is set with the patch's nulls
// dropped; a scalar replaces the document's; a map merges into the map; a
// list replaces the document's, or merges into it item by item where the
// field merges by key. The edits it returns are in order.
func merge(doc []byte, start, end int, patch map[string]any, schema strategicpatch.LookupPatchMeta) ([]edit, bool, error) {
	if len(patch) == 0 {
		return nil, true, nil
	}
	members, ok := objectMembers(doc, start, end)
	if !ok {
		return nil, false, nil
	}
	var es []edit
	deleted := make([]bool, len(members))
	type addition struct {
		key   string
		value []byte
	}
	var added []addition // keys the document lacks
	for k, v := range patch {
		if strings.HasPrefix(k, "$") {
			return nil, false, nil
		}
		i := find(members, k)
		if v == nil {
			if i >= 0 {
				deleted[i] = true
			}
			continue
		}
		var value []byte
		if i >= 0 {
			value = doc[members[i].start:members[i].end]
		}
		var b []byte
		switch pv := v.(type) {
		case map[string]any:
			if i < 0 || value[0] != '{' {
				b, ok = set(v)
				break
			}
			sub, meta, err := schema.LookupPatchMetadataForStruct(k)
			if s, sok := strategy(meta); err != nil || !sok || s == "replace" {
				return nil, false, nil
			}
			inner, err := patchObject(doc, members[i].start, members[i].end, pv, sub)
			if err != nil {
				return nil, false, err
			}
			es = append(es, inner...)
			continue
		case []any:
			if i < 0 || value[0] != '[' {
				b, ok = set(v)
				break
			}
			inner, replaced, ok, err := mergeList(doc, members[i].start, members[i].end, pv, k, schema)
			if err != nil || !ok {
				return nil, false, err
			}
			if replaced == nil {
				es = append(es, inner...)
				continue
			}
			b = replaced
		case string, float64, bool:
			b, ok = set(v)
		default:
			return nil, false, nil
		}
		if !ok {
			return nil, false, nil
		}
		if i < 0 {
			added = append(added, addition{k, b})
		} else {
			es = append(es, edit{members[i].start, members[i].end, b})
		}
	}
	slices.SortFunc(es, func(a, b edit) int { return a.start - b.start })
	if len(added) == 0 && !slices.Contains(deleted, true) {
		return es, true, nil
	}
	// Keys deleted or added: the level is written again, its members'
	// edits made in it.
	out := make([]byte, 0, end-start+64)
	out = append(out, '{')
	for i, m := range members {
		var inner []edit
		for len(es) > 0 && es[0].start < m.end {
			inner, es = append(inner, es[0]), es[1:]
		}
		if deleted[i] {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = applyEdits(out, doc, m.keyStart, m.end, inner)
	}
	slices.SortFunc(added, func(a, b addition) int { return strings.Compare(a.key, b.key) })
	for _, a := range added {
		if len(out) > 1 {
			out = append(out, ',')
		}
		key, _ := jsonenc.Marshal(a.key)
		out = append(out, key...)
		out = append(out, ':')
		out = append(out, a.value...)
	}
	return []edit{{start, end, append(out, '}')}}, true, nil
}

// set encodes a value the patch sets whole: mergeMap drops its nulls
// (removing its directives too, of which there must be none here).
func set(v any) ([]byte, bool) {
	if hasDirective(v) {
		return nil, false
	}
	b, err := jsonenc.Marshal(withoutNulls(v))
	return b, err == nil
}

// hasDirective reports whether any map in v has a key starting with "$".
func hasDirective(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if strings.HasPrefix(k, "$") || hasDirective(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasDirective(e) {
				return true
			}
		}
	}
	return false
}

// withoutNulls is v without the null values of its maps, at any depth.
func withoutNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if e != nil {
				out[k] = withoutNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutNulls(e)
		}
		return out
	}
	return v
}

// mergeList is mergeMap's merge of the list doc[start:end]: a list merged
// by key merges item by item, into the edits it returns (see itemEdits);
// any other is replaced by the patch's as it is, the value it returns.
func mergeList(doc []byte, start, end int, patch []any, key string, schema strategicpatch.LookupPatchMeta) ([]edit, []byte, bool, error) {
	sub, meta, err := schema.LookupPatchMetadataForSlice(key)
	if err != nil {
		return nil, nil, false, nil
	}
	s, ok := strategy(meta)
	if !ok || hasDirective(patch) {
		return nil, nil, false, nil
	}
	if s != "merge" {
		b, err := jsonenc.Marshal(patch)
		return nil, b, err == nil, nil
	}
	es, ok, err := itemEdits(doc, start, end, patch, meta.GetPatchMergeKey(), sub)
	return es, nil, ok, err
}

// itemEdits returns the edits of the items of the list doc[start:end] that
// the patch's items merge into: each patch item must name by the list's
// merge key an item of the list, in the list's order (the merge keeps it
// then; patch items out of order reorder the list).
func itemEdits(doc []byte, start, end int, patch []any, mergeKey string, sub strategicpatch.LookupPatchMeta) ([]edit, bool, error) {
	if mergeKey == "" {
		return nil, false, nil
	}
	items, ok := arrayItems(doc, start, end)
	if !ok {
		return nil, false, nil
	}
	// The merge sorts the list by its items' keys: every item must have
	// one, and a key two items share leaves their order to the sort.
	// Each item's position by its key: a patch of each of thousands of
	// containers does not search them all.
	names := make(map[string]int, len(items))
	for i, it := range items {
		if doc[it.start] != '{' {
			return nil, false, nil
		}
		ms, ok := objectMembers(doc, it.start, it.end)
		if !ok {
			return nil, false, nil
		}
		at := find(ms, mergeKey)
		if at < 0 {
			return nil, false, nil
		}
		name, ok := stringValue(doc[ms[at].start:ms[at].end])
		if _, dup := names[name]; !ok || dup {
			return nil, false, nil
		}
		names[name] = i
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
		at, ok := names[name]
		if !ok || at <= last {
			return nil, false, nil // a new item, or out of the list's order
		}
		last = at
		rest := make(map[string]any, len(pm)-1)
		for k, v := range pm {
			if k != mergeKey {
				rest[k] = v
			}
		}
		es, err := patchObject(doc, items[at].start, items[at].end, rest, sub)
		if err != nil {
			return nil, false, err
		}
		out = append(out, es...)
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
	key                  string
	keyStart, start, end int
}

// find returns the index of key's member, -1 when key is missing.
func find(ms []member, key string) int {
	for i, m := range ms {
		if m.key == key {
			return i
		}
	}
	return -1
}

// objectMembers lists the members of the JSON object b, false when b is
// not one or names a key twice (which decoding would settle by keeping the
// last).
func objectMembers(doc []byte, start, end int) ([]member, bool) {
	b := doc[:end]
	i := skipSpace(b, start)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	var ms []member
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil, true
	}
	for i < len(b) {
		keyStart := i
		kend, ok := load.SkipValue(b, i)
		if !ok {
			return nil, false
		}
		key, ok := stringValue(b[i:kend])
		if !ok {
			return nil, false
		}
		i = skipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		vend, ok := load.SkipValue(b, i)
		if !ok {
			return nil, false
		}
		if find(ms, key) >= 0 {
			return nil, false
		}
		ms = append(ms, member{key, keyStart, i, vend})
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

// arrayItems returns where the items of the JSON array doc[start:end] are.
func arrayItems(doc []byte, start, end int) ([]edit, bool) {
	b := doc[:end]
	i := skipSpace(b, start)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	var items []edit
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil, true
	}
	for i < len(b) {
		vend, ok := load.SkipValue(b, i)
		if !ok {
			return nil, false
		}
		items = append(items, edit{start: i, end: vend})
		i = skipSpace(b, vend)
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
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
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
