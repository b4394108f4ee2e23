// Command decodegen writes internal/object's direct decoders for the
// upstream struct types that manifests use (decode_gen.go), read from those
// types by reflection: a k8s.io/api upgrade is one `go generate`.
//
// Each decoder does what json-iterator's exact configuration (case-sensitive,
// unknown fields refused) does with that type, step for step: the same
// reads of the iterator in the same order, so that it takes the same
// documents and gives the same values. A type whose decode json-iterator
// makes otherwise than by its plain struct, slice, pointer and scalar rules
// (its own UnmarshalJSON, a map, an interface, a float, a `,string` field,
// an embedded pointer, two fields of one name) is left to json-iterator.
package main

import (
	"bytes"
	"encoding"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	jsoniter "github.com/json-iterator/go"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// roots are the upstream kinds internal/object decodes; every struct they
// reach is generated when it can be.
var roots = []reflect.Type{
	reflect.TypeFor[appsv1.Deployment](),
	reflect.TypeFor[appsv1.StatefulSet](),
	reflect.TypeFor[appsv1.DaemonSet](),
	reflect.TypeFor[appsv1.ReplicaSet](),
	reflect.TypeFor[corev1.Pod](),
	reflect.TypeFor[corev1.Service](),
	reflect.TypeFor[corev1.ConfigMap](),
	reflect.TypeFor[corev1.ReplicationController](),
	reflect.TypeFor[batchv1.Job](),
	reflect.TypeFor[batchv1.CronJob](),
	reflect.TypeFor[autoscalingv2.HorizontalPodAutoscaler](),
	reflect.TypeFor[policyv1.PodDisruptionBudget](),
	reflect.TypeFor[networkingv1.NetworkPolicy](),
	reflect.TypeFor[networkingv1.Ingress](),
	reflect.TypeFor[metav1.ObjectMeta](),
}

func main() {
	out := flag.String("o", "decode_gen.go", "the file to write")
	flag.Parse()
	src, err := Generate()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

var (
	unmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	anyType         = reflect.TypeFor[jsoniter.Any]()
	// Types json-iterator decodes by their own codecs, whatever their kind.
	special = []reflect.Type{
		reflect.TypeFor[json.RawMessage](), reflect.TypeFor[jsoniter.RawMessage](),
		reflect.TypeFor[json.Number](), reflect.TypeFor[jsoniter.Number](),
	}
	// Maps internal/object decodes directly (fastmap.go).
	directMaps = map[reflect.Type]string{
		reflect.TypeFor[map[string]string]():   "decodeStringMap",
		reflect.TypeFor[corev1.ResourceList](): "decodeResourceList",
	}
	// Types whose UnmarshalJSON neither keeps nor changes the bytes it is
	// given: they are given the value's bytes in the input, not a copy
	// (unmarshalInPlace), or by a decoder of their own (IntOrString).
	inPlace = map[reflect.Type]string{
		reflect.TypeFor[intstr.IntOrString](): "decodeIntOrString",
		reflect.TypeFor[resource.Quantity]():  "",
		reflect.TypeFor[metav1.Time]():        "",
		reflect.TypeFor[metav1.MicroTime]():   "",
	}
)

// field is one key of a struct as json-iterator binds it.
type field struct {
	key  string
	path string // the Go selector from the struct, "TypeMeta.Kind"
	typ  reflect.Type
}

type generator struct {
	structs map[reflect.Type][]field // the generated ones
	refused map[reflect.Type]bool
	imports map[string]string // package path -> name
}

// Generate returns the formatted source of decode_gen.go.
func Generate() ([]byte, error) {
	g := newGenerator()
	types := make([]reflect.Type, 0, len(g.structs))
	for t := range g.structs {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return g.funcName(types[i]) < g.funcName(types[j]) })

	var body bytes.Buffer
	fmt.Fprintf(&body, "// generatedDecoders are the direct decoders of decode_gen.go, by type.\n")
	fmt.Fprintf(&body, "var generatedDecoders = map[reflect.Type]func(unsafe.Pointer, *jsoniter.Iterator){\n")
	for _, t := range types {
		te := g.typeExpr(t)
		fmt.Fprintf(&body, "\treflect.TypeFor[%s](): func(p unsafe.Pointer, iter *jsoniter.Iterator) { %s((*%s)(p), iter) },\n", te, g.funcName(t), te)
	}
	fmt.Fprintf(&body, "}\n")
	for _, t := range types {
		fmt.Fprintf(&body, "\nfunc %s(s *%s, iter *jsoniter.Iterator) {\n", g.funcName(t), g.typeExpr(t))
		fs := g.structs[t]
		if len(fs) == 0 {
			fmt.Fprintf(&body, "\tdecodeNoField(iter)\n}\n")
			continue
		}
		fmt.Fprintf(&body, "\treadObject(iter, func(iter *jsoniter.Iterator, field []byte) bool {\n\t\tswitch string(field) {\n")
		for _, f := range fs {
			fmt.Fprintf(&body, "\t\tcase %q:\n\t\t\t%s\n", f.key, g.stmt(f.typ, "&s."+f.path))
		}
		fmt.Fprintf(&body, "\t\tdefault:\n\t\t\treturn unknownField(iter, field)\n\t\t}\n\t\treturn true\n\t})\n}\n")
	}

	var src bytes.Buffer
	src.WriteString("// Code generated by decodegen; DO NOT EDIT.\n\n//lint:file-ignore SA1019 the decoders read every field of the upstream types, the deprecated ones too.\n\npackage object\n\nimport (\n\t\"reflect\"\n\t\"unsafe\"\n\n\tjsoniter \"github.com/json-iterator/go\"\n")
	paths := make([]string, 0, len(g.imports))
	for p := range g.imports {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		fmt.Fprintf(&src, "\t%s %q\n", g.imports[p], p)
	}
	src.WriteString(")\n\n")
	src.Write(body.Bytes())
	return format.Source(src.Bytes())
}

// newGenerator walks the roots, choosing the structs to generate.
func newGenerator() *generator {
	g := &generator{structs: map[reflect.Type][]field{}, refused: map[reflect.Type]bool{}, imports: map[string]string{}}
	for _, t := range roots {
		g.visit(t)
	}
	return g
}

// visit walks the types t reaches, generating the structs that can be.
func (g *generator) visit(t reflect.Type) {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		g.visit(t.Elem())
		return
	case reflect.Map:
		g.visit(t.Elem())
		return
	case reflect.Struct:
	default:
		return
	}
	if _, ok := g.structs[t]; ok || g.refused[t] {
		return
	}
	fs, ok := g.fields(t)
	if !ok || !g.plainStruct(t) {
		g.refused[t] = true
		return
	}
	g.structs[t] = fs
	for _, f := range fs {
		g.visit(f.typ)
	}
}

// plainStruct reports whether json-iterator decodes t by its struct decoder.
func (g *generator) plainStruct(t reflect.Type) bool {
	return t.Name() != "" && !slices.Contains(special, t) && !decodesItself(t) && !reflect.PointerTo(t).Implements(anyType)
}

func decodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(unmarshaler) || pt.Implements(textUnmarshaler)
}

// fields lists t's keys as json-iterator's describeStruct binds them, or
// reports false where its binding is not the plain one: an embedded
// pointer, a `,string` field, a field out of reach of a selector, two
// fields of one key (json-iterator's own conflict rules then apply).
func (g *generator) fields(t reflect.Type) ([]field, bool) {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _ := f.Tag.Lookup("json")
		if tag == "-" || f.Name == "_" {
			continue
		}
		parts := strings.Split(tag, ",")
		if slices.Contains(parts[1:], "string") {
			return nil, false
		}
		if f.Anonymous && parts[0] == "" {
			switch {
			case f.Type.Kind() == reflect.Struct:
				if !f.IsExported() {
					return nil, false
				}
				inner, ok := g.fields(f.Type)
				if !ok {
					return nil, false
				}
				for _, in := range inner {
					in.path = f.Name + "." + in.path
					out = append(out, in)
				}
				continue
			case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
				return nil, false
			}
		}
		if unicode.IsLower(rune(f.Name[0])) || f.Name[0] == '_' {
			continue
		}
		key := f.Name
		if parts[0] != "" {
			key = parts[0]
		}
		out = append(out, field{key: key, path: f.Name, typ: f.Type})
	}
	seen := map[string]bool{}
	for _, f := range out {
		if seen[f.key] {
			return nil, false
		}
		seen[f.key] = true
	}
	return out, true
}

// stmt decodes a value of type t at the pointer p.
func (g *generator) stmt(t reflect.Type, p string) string {
	switch {
	case g.delegated(t):
	case t.Kind() == reflect.Pointer:
		return fmt.Sprintf("decodePointer(%s, iter, %s)", p, g.funcOf(t.Elem()))
	case t.Kind() == reflect.Slice:
		return fmt.Sprintf("decodeSlice(%s, iter, %s)", p, g.funcOf(t.Elem()))
	}
	return fmt.Sprintf("%s(%s, iter)", g.funcOf(t), p)
}

// delegated reports whether t's values are left to json-iterator.
func (g *generator) delegated(t reflect.Type) bool {
	if slices.Contains(special, t) || reflect.PointerTo(t).Implements(anyType) {
		return true
	}
	if decodesItself(t) {
		return !reflect.PointerTo(t).Implements(unmarshaler) // a text unmarshaler
	}
	if _, ok := directMaps[t]; ok {
		return false
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Pointer:
		return false
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Uint8 // base64
	case reflect.Struct:
		_, ok := g.structs[t]
		return !ok
	}
	return true
}

// funcOf is a function value that decodes a value of type t at a pointer.
func (g *generator) funcOf(t reflect.Type) string {
	if name := inPlace[t]; name != "" {
		return name // not through typeExpr: the file need not import t's package
	}
	te := g.typeExpr(t)
	if g.delegated(t) {
		return "readVal[" + te + "]"
	}
	if decodesItself(t) {
		if _, ok := inPlace[t]; ok {
			return "unmarshalInPlace[*" + te + "]"
		}
		return "unmarshalJSON[*" + te + "]"
	}
	if name, ok := directMaps[t]; ok {
		return name
	}
	switch t.Kind() {
	case reflect.String:
		return "readString[" + te + "]"
	case reflect.Bool:
		return "readBool[" + te + "]"
	case reflect.Int:
		return "readInt[" + te + "]"
	case reflect.Int32:
		return "readInt32[" + te + "]"
	case reflect.Int64:
		return "readInt64[" + te + "]"
	case reflect.Pointer, reflect.Slice:
		return fmt.Sprintf("func(p *%s, iter *jsoniter.Iterator) { %s }", te, g.stmt(t, "p"))
	case reflect.Struct:
		return g.funcName(t)
	}
	panic("no decoder for " + t.String())
}

var version = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]*)?$`)

// pkgName is the name the generated file imports a package by: "corev1"
// for k8s.io/api/core/v1, "intstr" for .../util/intstr.
func (g *generator) pkgName(path string) string {
	if name, ok := g.imports[path]; ok {
		return name
	}
	elems := strings.Split(path, "/")
	name := elems[len(elems)-1]
	if version.MatchString(name) && len(elems) > 1 {
		name = elems[len(elems)-2] + name
	}
	name = strings.NewReplacer("-", "", ".", "").Replace(name)
	for _, other := range g.imports {
		if other == name {
			name += fmt.Sprint(len(g.imports))
		}
	}
	g.imports[path] = name
	return name
}

// typeExpr is t as the generated file writes it.
func (g *generator) typeExpr(t reflect.Type) string {
	if t.Name() != "" {
		if t.PkgPath() == "" {
			return t.Name()
		}
		return g.pkgName(t.PkgPath()) + "." + t.Name()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + g.typeExpr(t.Elem())
	case reflect.Slice:
		return "[]" + g.typeExpr(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), g.typeExpr(t.Elem()))
	case reflect.Map:
		return "map[" + g.typeExpr(t.Key()) + "]" + g.typeExpr(t.Elem())
	}
	panic("no expression for " + t.String())
}

// funcName is the generated decoder of struct t: decodeCorev1Container.
func (g *generator) funcName(t reflect.Type) string {
	pkg := g.pkgName(t.PkgPath())
	return "decode" + strings.ToUpper(pkg[:1]) + pkg[1:] + t.Name()
}
