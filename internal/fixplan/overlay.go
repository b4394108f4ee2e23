package fixplan

import (
	"backfire.dev/backfire/internal/exactjson"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/source"
	"backfire.dev/backfire/internal/yamledit"
)

// overlayPlan gathers the fixes of objects built by Kustomize overlays:
// one strategic-merge patch file per object, listed in the overlay's
// kustomization under patches:.
type overlayPlan struct {
	on      bool // overlays are built by fix (the Kustomize options)
	maxSize int64
	chosen  []finding.Finding
	byDir   map[string][]overlayChange
	changes []planned
}

func (p *overlayPlan) claim(o *object.Object) *Reason {
	if o.Doc.Origin.Kind != load.OverlayBuild || !p.on {
		return unclaimed(o)
	}
	return nil
}

func (p *overlayPlan) take(o *object.Object, c fix.Change) (*fix.Change, *Reason) {
	p.add(o, c)
	return nil, nil
}

// write adds the patch files and kustomizations; each change spans its
// patch file and its overlay's kustomization.
func (p *overlayPlan) write(files map[string]*File) ([]planned, error) {
	if len(p.byDir) == 0 {
		return nil, nil
	}
	fs, err := p.files(p.maxSize)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		files[f.Path] = f
	}
	var applied []planned
	for _, c := range p.changes {
		c.spans = []Span{{File: c.file}}
		if o := c.obj; o != nil {
			for _, f := range fs {
				if filepath.Dir(f.Path) == filepath.Clean(o.Doc.File) && slices.Contains(source.KustomizationFiles, filepath.Base(f.Path)) {
					c.spans = append(c.spans, Span{File: f.Path})
				}
			}
		}
		applied = append(applied, c)
	}
	return applied, nil
}

// verify is left to a second run: the build of the overlay with its
// patch is proven by the plan's rescan (see the tests).
func (p *overlayPlan) verify(*scan.Result, map[string][]byte) error { return nil }

type overlayChange struct {
	obj    *object.Object
	change fix.Change
	rules  []string
}

func (p *overlayPlan) add(o *object.Object, c fix.Change) {
	if p.byDir == nil {
		p.byDir = map[string][]overlayChange{}
	}
	var rs []string
	for _, i := range c.Findings {
		rs = append(rs, p.chosen[i].Rule)
	}
	dir := o.Doc.Origin.Dir
	p.byDir[dir] = append(p.byDir[dir], overlayChange{o, c, rs})
}

// patchFileName names the patch file of one object.
func patchFileName(r object.Ref) string {
	return "backfire-fix-" + strings.ToLower(r.Kind) + "-" + r.Name + ".yaml"
}

// files writes, for each overlay, the patch files and the kustomization
// that lists them.
func (p *overlayPlan) files(maxSize int64) ([]*File, error) {
	var out []*File
	for _, dir := range sortedKeys(p.byDir) {
		kfile := ""
		for _, name := range source.KustomizationFiles {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				kfile = filepath.Join(dir, name)
				break
			}
		}
		if kfile == "" {
			return nil, fmt.Errorf("%s: no kustomization file", dir)
		}
		kdata, err := source.ReadFile(kfile, maxSize)
		if err != nil {
			return nil, err
		}
		var k struct {
			Patches []map[string]any `yaml:"patches"`
		}
		if err := yaml.Unmarshal(kdata, &k); err != nil {
			return nil, fmt.Errorf("%s: %v", kfile, err)
		}
		patches := make([]any, 0, len(k.Patches)+1)
		for _, e := range k.Patches {
			patches = append(patches, e)
		}
		var kRules []string
		for _, oc := range p.byDir[dir] {
			name := patchFileName(oc.obj.Ref)
			path := filepath.Join(dir, name)
			src := sourceRef(kdata, oc.obj, maxSize)
			doc := map[string]any{
				"apiVersion": oc.obj.Ref.APIVersion,
				"kind":       oc.obj.Ref.Kind,
				"metadata":   metadataOf(src),
			}
			for k, v := range oc.change.Patch {
				doc[k] = v
			}
			if ep, pos, data, ok := existingPatch(dir, k.Patches, src, oc.change.Patch, maxSize); ok {
				// The overlay already patches these fields: that patch is
				// edited, rather than overruled by a second one.
				n, err := yamledit.EditPatch(data, pos, oc.change.Patch, oc.change.Placeholders)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", ep, err)
				}
				out = append(out, &File{Path: ep, Old: data, New: n, Rules: oc.rules})
				kRules = append(kRules, oc.rules...)
				p.changes = append(p.changes, planned{change: oc.change, obj: oc.obj, file: ep, overlay: true, rules: oc.rules})
				continue
			}
			f := &File{Path: path, Rules: oc.rules}
			if old, err := os.ReadFile(path); err == nil {
				// A patch this tool wrote before: edited in place.
				pos, err := rootPosition(old)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", path, err)
				}
				if f.New, err = yamledit.EditPatch(old, pos, oc.change.Patch, oc.change.Placeholders); err != nil {
					return nil, fmt.Errorf("%s: %v", path, err)
				}
				f.Old = old
			} else {
				rs := slices.Clone(oc.rules)
				slices.Sort(rs)
				head := "# Written by backfire fix: " + strings.Join(slices.Compact(rs), ", ") + " on " + oc.obj.Ref.String() + ".\n"
				f.New = append([]byte(head), yamledit.Render(doc, oc.change.Placeholders)...)
			}
			out = append(out, f)
			entry := map[string]any{"path": name}
			if !slices.ContainsFunc(patches, func(e any) bool { return fix.Equal(e, entry) }) {
				patches = append(patches, entry)
			}
			kRules = append(kRules, oc.rules...)
			p.changes = append(p.changes, planned{change: oc.change, obj: oc.obj, file: path, overlay: true, rules: oc.rules})
		}
		pos, err := rootPosition(kdata)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", kfile, err)
		}
		nk, err := yamledit.Edit(kdata, pos, map[string]any{"patches": patches}, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", kfile, err)
		}
		slices.Sort(kRules)
		out = append(out, &File{Path: kfile, Old: kdata, New: nk, Rules: slices.Compact(kRules)})
	}
	return out, nil
}

// sourceRef is the object as the overlay's patches name it: Kustomize
// applies a kustomization's patches before its own namePrefix,
// nameSuffix and namespace, so a patch names the object as its source
// file does (kubebuilder's config/default sets namePrefix and namespace,
// and its patches name the Deployment controller-manager in namespace
// system, as config/manager/manager.yaml does). The built name less the
// overlay's prefix and suffix is looked up in the file the object came
// from for its namespace; an object not found there keeps its built
// name and namespace.
func sourceRef(kdata []byte, o *object.Object, maxSize int64) object.Ref {
	var k struct {
		NamePrefix string `yaml:"namePrefix"`
		NameSuffix string `yaml:"nameSuffix"`
		Namespace  string `yaml:"namespace"`
	}
	ref := o.Ref
	if yaml.Unmarshal(kdata, &k) != nil || k.NamePrefix == "" && k.NameSuffix == "" && k.Namespace == "" {
		return ref
	}
	name := strings.TrimSuffix(strings.TrimPrefix(ref.Name, k.NamePrefix), k.NameSuffix)
	from := o.Doc.Origin.From
	if from == "" {
		return ref
	}
	data, err := source.ReadFile(from, maxSize)
	if err != nil {
		return ref
	}
	for _, d := range load.Parse(from, data).Documents {
		var v struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if exactjson.Unmarshal(d.JSON, &v) != nil || v.Kind != ref.Kind || v.Metadata.Name != name {
			continue
		}
		ref.Name, ref.Namespace = name, v.Metadata.Namespace
		return ref
	}
	return ref
}

func metadataOf(r object.Ref) map[string]any {
	m := map[string]any{"name": r.Name}
	if r.Namespace != "" {
		m["namespace"] = r.Namespace
	}
	return m
}

// existingPatch finds a patch file the kustomization lists (by path,
// without a target) whose document patches the object and sets a field
// the change sets too.
func existingPatch(dir string, entries []map[string]any, ref object.Ref, patch map[string]any, maxSize int64) (string, load.Position, []byte, bool) {
	want := map[string]bool{}
	for _, l := range leafPaths(patch, "") {
		want[l] = true
	}
	for _, e := range entries {
		rel, ok := e["path"].(string)
		if !ok || e["target"] != nil {
			continue
		}
		path := filepath.Join(dir, rel)
		data, err := source.ReadFile(path, maxSize)
		if err != nil {
			continue
		}
		for _, d := range load.Parse(path, data).Documents {
			var v map[string]any
			if json.Unmarshal(d.JSON, &v) != nil || d.Kind != ref.Kind {
				continue
			}
			meta, _ := v["metadata"].(map[string]any)
			if meta == nil || meta["name"] != ref.Name {
				continue
			}
			for _, l := range leafPaths(v, "") {
				if want[l] {
					pos, _ := d.Locate("")
					return path, pos, data, true
				}
			}
		}
	}
	return "", load.Position{}, nil, false
}

// leafPaths lists the fields a patch sets, list items by name.
func leafPaths(v any, path string) []string {
	switch x := v.(type) {
	case map[string]any:
		var out []string
		for k, c := range x {
			out = append(out, leafPaths(c, join(path, k))...)
		}
		return out
	case []any:
		if named(x) {
			var out []string
			for _, it := range x {
				m := it.(map[string]any)
				for k, c := range m {
					if k != "name" {
						out = append(out, leafPaths(c, join(path+"["+m["name"].(string)+"]", k))...)
					}
				}
			}
			return out
		}
	}
	return []string{path}
}
