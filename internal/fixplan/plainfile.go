package fixplan

import (
	"bytes"
	"fmt"
	"slices"
	"sort"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/source"
	"backfire.dev/backfire/internal/yamledit"
)

// plainFile is the destination of an object read from a plain YAML or
// JSON file: the change is written into its document in place.
type plainFile struct {
	out     *FixPlan
	chosen  []finding.Finding
	objects []*object.Object // every object of the scan, for the spans
	maxSize int64
	edits   []planned
	applied []planned
}

func (d *plainFile) claim(o *object.Object) *Reason {
	switch {
	case o.Doc.Origin.Kind != load.PlainFile:
		return unclaimed(o)
	case o.Doc.File == "<stdin>":
		return reason(ReasonStdin, "read from standard input: there is no file to write back")
	}
	return nil
}

func (d *plainFile) take(o *object.Object, c fix.Change) (*fix.Change, *Reason) {
	pos, _ := o.Doc.Locate("")
	d.edits = append(d.edits, planned{change: c, obj: o, file: o.Doc.File, pos: pos, spans: []Span{documentSpan(d.objects, o)}})
	return nil, nil
}

// write edits each file from its last object up, so that an edit never
// moves the position of an object still to be edited. A file that cannot
// be read or edited leaves its object's findings.
func (d *plainFile) write(files map[string]*File) ([]planned, error) {
	edits := d.edits
	sort.SliceStable(edits, func(a, b int) bool {
		if edits[a].file != edits[b].file {
			return edits[a].file < edits[b].file
		}
		return edits[a].pos.Line > edits[b].pos.Line
	})
	for _, e := range edits {
		f, ok := files[e.file]
		if !ok {
			data, err := source.ReadFile(e.file, d.maxSize)
			if err != nil {
				d.out.leave(d.chosen, e.change, reason(ReasonUnread, err.Error()))
				continue
			}
			f = &File{Path: e.file, Old: data, New: data}
			files[e.file] = f
		}
		next, err := yamledit.EditWith(f.New, e.pos, e.change.Patch, yamledit.Options{Placeholders: e.change.Placeholders, Notes: &f.Notes})
		if err != nil {
			d.out.leave(d.chosen, e.change, reason(ReasonEdit, fmt.Sprintf("%s: %v", e.file, err)))
			continue
		}
		f.New = next
		for _, i := range e.change.Findings {
			if !slices.Contains(f.Rules, d.chosen[i].Rule) {
				f.Rules = append(f.Rules, d.chosen[i].Rule)
			}
		}
		d.out.Notes = append(d.out.Notes, e.change.Notes...)
		d.applied = append(d.applied, e)
	}
	return d.applied, nil
}

// verify proves idempotence: the same fixes on the new contents change
// nothing.
func (d *plainFile) verify(after *scan.Result, overlay map[string][]byte) error {
	for _, e := range d.applied {
		o := sameObject(after.Objects, e.obj)
		if o == nil {
			return fmt.Errorf("%s: %s is gone after the fix", e.file, e.change.Target)
		}
		pos, _ := o.Doc.Locate("")
		again, err := yamledit.Edit(overlay[e.file], pos, e.change.Patch, e.change.Placeholders)
		if err != nil {
			return fmt.Errorf("%s: applying the fix again: %v", e.file, err)
		}
		if !bytes.Equal(again, overlay[e.file]) {
			return fmt.Errorf("%s:%d: applying the fix a second time changes the file again; nothing written", e.file, firstDiffLine(again, overlay[e.file]))
		}
	}
	return nil
}
