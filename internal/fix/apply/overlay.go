package apply

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/source"
)

// kustomizeOrigin starts the origin of an object built by Kustomize.
const kustomizeOrigin = "built by kustomization "

// overlayPlan gathers the fixes of objects built by Kustomize overlays:
// one strategic-merge patch file per object, listed in the overlay's
// kustomization under patches:.
type overlayPlan struct {
	byDir   map[string][]overlayChange
	changes []planned
}

type overlayChange struct {
	obj    *object.Object
	change fix.Change
	rules  []string
}

func (p *overlayPlan) add(o *object.Object, c fix.Change, chosen []finding.Finding) {
	if p.byDir == nil {
		p.byDir = map[string][]overlayChange{}
	}
	var rs []string
	for _, i := range c.Findings {
		rs = append(rs, chosen[i].Rule)
	}
	dir := o.Doc.File // the stream of a build is named by its directory
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
			doc := map[string]any{
				"apiVersion": oc.obj.Ref.APIVersion,
				"kind":       oc.obj.Ref.Kind,
				"metadata":   metadataOf(oc.obj.Ref),
			}
			for k, v := range oc.change.Patch {
				doc[k] = v
			}
			f := &File{Path: path, Rules: oc.rules}
			if old, err := os.ReadFile(path); err == nil {
				// A patch this tool wrote before: edited in place.
				pos, err := rootPosition(old)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", path, err)
				}
				if f.New, err = fix.Edit(old, pos, oc.change.Patch, nil); err != nil {
					return nil, fmt.Errorf("%s: %v", path, err)
				}
				f.Old = old
			} else {
				rs := slices.Clone(oc.rules)
				slices.Sort(rs)
				head := "# Written by backfire fix: " + strings.Join(slices.Compact(rs), ", ") + " on " + oc.obj.Ref.String() + ".\n"
				f.New = append([]byte(head), fix.Render(doc, oc.change.Placeholders)...)
			}
			out = append(out, f)
			entry := map[string]any{"path": name}
			if !slices.ContainsFunc(patches, func(e any) bool { return fix.Equal(e, entry) }) {
				patches = append(patches, entry)
			}
			kRules = append(kRules, oc.rules...)
			p.changes = append(p.changes, planned{change: oc.change, file: path, overlay: true, rules: oc.rules})
		}
		pos, err := rootPosition(kdata)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", kfile, err)
		}
		nk, err := fix.Edit(kdata, pos, map[string]any{"patches": patches}, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", kfile, err)
		}
		slices.Sort(kRules)
		out = append(out, &File{Path: kfile, Old: kdata, New: nk, Rules: slices.Compact(kRules)})
	}
	return out, nil
}

func metadataOf(r object.Ref) map[string]any {
	m := map[string]any{"name": r.Name}
	if r.Namespace != "" {
		m["namespace"] = r.Namespace
	}
	return m
}
