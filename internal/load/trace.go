package load

// Trace is where a field of a generated document (a rendered Helm template,
// an object built by Kustomize) was written by hand.
type Trace struct {
	// File, Line and Column locate the field in the file it was written in
	// when the generated document carries it unchanged from there (a
	// Kustomize base's resource file). File is empty otherwise, and the
	// field's position in the generated document stands.
	File         string
	Line, Column int
	// Values are the values keys that supplied the field's value, and
	// where they are set; nil when none is known.
	Values *Provenance
}

// ValuesRef is one values key and where it is set.
type ValuesRef struct {
	// File is the values file that sets the key (the chart's values.yaml,
	// a --values file), empty for --set; Layer names the layer for users:
	// the file, or "--set a.b=c".
	File, Layer string
	// Line is the key's line in File; 0 for --set.
	Line int
	// Key is the dotted key as the root chart sees it:
	// "redis.master.livenessProbe.timeoutSeconds".
	Key string
}

// Provenance is what set a field of a rendered document: the values keys
// of its scalars.
type Provenance struct {
	// Keys are the keys of the field's scalars, highest precedence first.
	Keys []ValuesRef
	// Own says the field is a scalar and Keys[0] is its own key.
	Own bool
	// Parent, when set, is one key above all of Keys that one values file
	// writes: the field's values are that mapping's.
	Parent *ValuesRef
	// Text says it for users: "values.yaml:1074
	// database.internal.livenessProbe.timeoutSeconds", "values.yaml:1071
	// database.internal.livenessProbe (5 keys)".
	Text string
}

// Key is the values key of a scalar field, when one key set it.
func (p *Provenance) Key() (ValuesRef, bool) {
	if p == nil || !p.Own || len(p.Keys) != 1 {
		return ValuesRef{}, false
	}
	return p.Keys[0], true
}

// At is the key to show a user: the parent of the field's keys, else the
// first of them.
func (p *Provenance) At() (ValuesRef, bool) {
	switch {
	case p == nil:
		return ValuesRef{}, false
	case p.Parent != nil:
		return *p.Parent, true
	case len(p.Keys) > 0:
		return p.Keys[0], true
	}
	return ValuesRef{}, false
}

// Tracer follows the field at path of a generated document, found at pos in
// it, back to where it was written. It returns the zero Trace when it cannot
// tell.
type Tracer func(d *Document, path string, pos Position) Trace
