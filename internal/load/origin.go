package load

// Origin is how a document was produced. The zero Origin is a plain file,
// read as it is written; fix routes a change by its Kind (a plain file is
// edited, a chart's render through its values or templates, an
// overlay's build with a patch in the overlay), never by its Text.
type Origin struct {
	Kind OriginKind
	// Dir is the chart or the overlay as given: the chart directory or
	// archive rendered, the directory Kustomize built.
	Dir string
	// Chart, Release and Namespace name a chart's render.
	Chart, Release, Namespace string
	// From is the file of an overlay's tree the object was read from,
	// when the build tells it.
	From string
	// Text says it for users: "rendered from chart harbor 1.18.0
	// (release ...)", "built by kustomization prod from base/db.yaml".
	Text string
}

// OriginKind is what produced a document.
type OriginKind uint8

const (
	// PlainFile is a file or standard input, read as it is.
	PlainFile OriginKind = iota
	// ChartTemplate is a template of a Helm chart, rendered.
	ChartTemplate
	// ChartCRD is a file of a chart's crds/ directory, not templated.
	ChartCRD
	// OverlayBuild is an object built by a Kustomize overlay.
	OverlayBuild
	// LiveObject is an object read from a cluster.
	LiveObject
	// PrintedOutput is an object rebuilt from what a command printed
	// (kubectl describe, get -o wide): there is no file to edit.
	PrintedOutput
)

func (o Origin) String() string { return o.Text }
