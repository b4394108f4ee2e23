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
	// Values names the values-file key that supplied the field's value, and
	// where it is set: "values.yaml:1074 database.internal.livenessProbe.timeoutSeconds".
	Values string
}

// Tracer follows the field at path of a generated document, found at pos in
// it, back to where it was written. It returns the zero Trace when it cannot
// tell.
type Tracer func(d *Document, path string, pos Position) Trace
