package fixplan

// ReasonType says, as a type a program can switch on, why a destination
// does not take a change or why a finding is left; the detail is said to
// the user. It is modelled on apimachinery's field.Error (a type and a
// detail), not a free string.
type ReasonType string

const (
	// ReasonNoTarget: the object the fix applies to is not in the input.
	ReasonNoTarget ReasonType = "NoTarget"
	// ReasonOrigin: no destination edits objects of this origin (a
	// chart rendered without the chart options, a build fix does not
	// patch).
	ReasonOrigin ReasonType = "Origin"
	// ReasonStdin: read from standard input, nowhere to write back.
	ReasonStdin ReasonType = "Stdin"
	// ReasonNoPatch: the finding carries no patch, or one to make by hand.
	ReasonNoPatch ReasonType = "NoPatch"
	// ReasonAmbiguous: the object the fix names is defined in several
	// files, or cannot be composed.
	ReasonAmbiguous ReasonType = "Ambiguous"
	// ReasonUnread: the file to edit cannot be read.
	ReasonUnread ReasonType = "Unread"
	// ReasonEdit: the text editor refused the edit.
	ReasonEdit ReasonType = "Edit"
	// ReasonUnwritable: the values reach the fields, in a file fix does
	// not write in place (a link, read-only, inside an archive).
	ReasonUnwritable ReasonType = "Unwritable"
	// ReasonSchema: the chart's values.schema.json rejects the values
	// that would fix the finding.
	ReasonSchema ReasonType = "Schema"
	// ReasonUnreached: neither the chart's values nor its template reach
	// the fields.
	ReasonUnreached ReasonType = "Unreached"
	// ReasonNoChange: the fix changes no byte of the files it edits.
	ReasonNoChange ReasonType = "NoChange"
	// ReasonStill: the rescan still reports the finding.
	ReasonStill ReasonType = "Still"
)

// Reason is why a destination does not take a change, or a finding is
// left.
type Reason struct {
	Type   ReasonType
	Detail string
}

func (r *Reason) String() string { return r.Detail }

// reason is a Reason of type t.
func reason(t ReasonType, detail string) *Reason { return &Reason{Type: t, Detail: detail} }

// final reports whether no destination after the one that gives a reason
// of type t may take the change: the values reach the fields, in a file
// fix does not write in place (--values-out does), so another route (a
// template edit) would be the wrong fix.
func (t ReasonType) final() bool { return t == ReasonUnwritable }
