// Package xsd validates an XML document against an XML Schema in Go, for the
// subset of XML Schema 1.0 that the JUnit schema the report tests vendor
// uses: global and local elements, element references, named and inline
// complex types (mixed or not), sequences and choices with minOccurs and
// maxOccurs, attributes with use="required", xs:string and string types
// restricted by a pattern. A schema that uses anything else is refused when
// it is loaded, so a schema that changes cannot be half-checked; a plain
// `go test ./...` then needs no xmllint.
package xsd

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

const xsNS = "http://www.w3.org/2001/XMLSchema"

// Schema is a loaded schema.
type Schema struct {
	elements map[string]*element // the global elements: any may be the root
	types    map[string]*complexType
	simple   map[string]*regexp.Regexp // named string types and their pattern
}

type element struct {
	name     string
	text     bool         // type xs:string: text and no attributes or children
	typeName string       // a named complex type, resolved on use
	typ      *complexType // an inline complex type
}

type complexType struct {
	mixed   bool
	attrs   map[string]attribute
	content *particle // nil: no children
}

type attribute struct {
	required bool
	pattern  *regexp.Regexp // nil: any string
}

const unbounded = math.MaxInt

type particle struct {
	kind     string   // "element", "sequence" or "choice"
	elem     *element // kind element: its declaration, or nil for a reference
	ref      string   // kind element: the name it matches
	min, max int
	kids     []*particle
}

// node is an XML element as read, with its text.
type node struct {
	name  xml.Name
	attrs []xml.Attr
	kids  []*node
	text  strings.Builder
}

func parse(r io.Reader) (*node, error) {
	d := xml.NewDecoder(r)
	var stack []*node
	var root *node
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name, attrs: tok.Attr}
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				top.kids = append(top.kids, n)
			} else if root != nil {
				return nil, fmt.Errorf("a second root element <%s>", tok.Name.Local)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(tok)
			} else if len(bytes.TrimSpace(tok)) > 0 {
				return nil, fmt.Errorf("text outside the root element: %q", tok)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("no root element")
	}
	return root, nil
}

func attr(n *node, name string) (string, bool) {
	for _, a := range n.attrs {
		if a.Name.Space == "" && a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// Load reads a schema.
func Load(data []byte) (*Schema, error) {
	root, err := parse(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if root.name.Space != xsNS || root.name.Local != "schema" {
		return nil, fmt.Errorf("root <%s> is not xs:schema", root.name.Local)
	}
	s := &Schema{elements: map[string]*element{}, types: map[string]*complexType{}, simple: map[string]*regexp.Regexp{}}
	// Simple types first: attributes refer to them.
	for _, n := range root.kids {
		if n.name.Local == "simpleType" {
			if err := s.simpleType(n); err != nil {
				return nil, err
			}
		}
	}
	for _, n := range root.kids {
		if n.name.Space != xsNS {
			return nil, fmt.Errorf("<%s> outside the schema namespace", n.name.Local)
		}
		name, _ := attr(n, "name")
		switch n.name.Local {
		case "simpleType":
		case "complexType":
			t, err := s.complexType(n)
			if err != nil {
				return nil, fmt.Errorf("complexType %s: %w", name, err)
			}
			s.types[name] = t
		case "element":
			e, err := s.element(n)
			if err != nil {
				return nil, fmt.Errorf("element %s: %w", name, err)
			}
			s.elements[name] = e
		default:
			return nil, fmt.Errorf("unsupported schema construct xs:%s", n.name.Local)
		}
	}
	for name, e := range s.elements {
		if e.typeName != "" && s.types[e.typeName] == nil {
			return nil, fmt.Errorf("element %s: unknown type %s", name, e.typeName)
		}
	}
	return s, nil
}

func (s *Schema) simpleType(n *node) error {
	name, _ := attr(n, "name")
	if len(n.kids) != 1 || n.kids[0].name.Local != "restriction" {
		return fmt.Errorf("simpleType %s: only a restriction is supported", name)
	}
	r := n.kids[0]
	if base, _ := attr(r, "base"); base != "xs:string" {
		return fmt.Errorf("simpleType %s: restriction of %s", name, base)
	}
	var alts []string
	for _, p := range r.kids {
		if p.name.Local != "pattern" {
			return fmt.Errorf("simpleType %s: unsupported facet %s", name, p.name.Local)
		}
		v, _ := attr(p, "value")
		alts = append(alts, "(?:"+v+")")
	}
	// An XML Schema pattern matches the whole value; its syntax's subset used
	// here (classes, counts, groups, escapes) is RE2's.
	re, err := regexp.Compile("^(?:" + strings.Join(alts, "|") + ")$")
	if err != nil {
		return fmt.Errorf("simpleType %s: %w", name, err)
	}
	s.simple[name] = re
	return nil
}

func (s *Schema) element(n *node) (*element, error) {
	e := &element{}
	e.name, _ = attr(n, "name")
	typ, hasType := attr(n, "type")
	switch {
	case typ == "xs:string":
		e.text = true
	case hasType:
		e.typeName = typ
	}
	for _, k := range n.kids {
		if k.name.Local != "complexType" || hasType || e.typ != nil {
			return nil, fmt.Errorf("unsupported <%s> in an element", k.name.Local)
		}
		t, err := s.complexType(k)
		if err != nil {
			return nil, err
		}
		e.typ = t
	}
	if !hasType && e.typ == nil {
		return nil, fmt.Errorf("no type")
	}
	return e, nil
}

func (s *Schema) complexType(n *node) (*complexType, error) {
	t := &complexType{attrs: map[string]attribute{}}
	if m, _ := attr(n, "mixed"); m == "true" {
		t.mixed = true
	}
	for _, k := range n.kids {
		switch k.name.Local {
		case "attribute":
			name, _ := attr(k, "name")
			a := attribute{}
			use, _ := attr(k, "use")
			a.required = use == "required"
			switch typ, _ := attr(k, "type"); {
			case typ == "xs:string":
			case s.simple[typ] != nil:
				a.pattern = s.simple[typ]
			default:
				return nil, fmt.Errorf("attribute %s: unsupported type %q", name, typ)
			}
			t.attrs[name] = a
		case "sequence", "choice":
			if t.content != nil {
				return nil, fmt.Errorf("two content models")
			}
			p, err := s.particle(k)
			if err != nil {
				return nil, err
			}
			t.content = p
		default:
			return nil, fmt.Errorf("unsupported <%s> in a complexType", k.name.Local)
		}
	}
	return t, nil
}

func (s *Schema) particle(n *node) (*particle, error) {
	p := &particle{kind: n.name.Local, min: 1, max: 1}
	if v, ok := attr(n, "minOccurs"); ok {
		i, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("minOccurs %q", v)
		}
		p.min = i
	}
	if v, ok := attr(n, "maxOccurs"); ok {
		if v == "unbounded" {
			p.max = unbounded
		} else {
			i, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("maxOccurs %q", v)
			}
			p.max = i
		}
	}
	switch p.kind {
	case "element":
		if ref, ok := attr(n, "ref"); ok {
			p.ref = ref
			return p, nil
		}
		e, err := s.element(n)
		if err != nil {
			return nil, err
		}
		p.elem, p.ref = e, e.name
	case "sequence", "choice":
		for _, k := range n.kids {
			kp, err := s.particle(k)
			if err != nil {
				return nil, err
			}
			p.kids = append(p.kids, kp)
		}
	default:
		return nil, fmt.Errorf("unsupported particle <%s>", p.kind)
	}
	return p, nil
}

// Validate checks a document: well-formed XML with only the characters XML
// allows, its root a global element, and every element as declared.
func (s *Schema) Validate(doc []byte) error {
	root, err := parse(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	e := s.elements[root.name.Local]
	if e == nil || root.name.Space != "" {
		return fmt.Errorf("root <%s> is not an element of the schema", root.name.Local)
	}
	return s.validate(root, e, "/"+root.name.Local)
}

func (s *Schema) validate(n *node, e *element, path string) error {
	if e.text {
		if len(n.attrs) > 0 || len(n.kids) > 0 {
			return fmt.Errorf("%s: text only, has attributes or elements", path)
		}
		return nil
	}
	t := e.typ
	if t == nil {
		t = s.types[e.typeName]
	}
	for _, a := range n.attrs {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
			continue
		}
		d, ok := t.attrs[a.Name.Local]
		if !ok || a.Name.Space != "" {
			return fmt.Errorf("%s: attribute %s is not declared", path, a.Name.Local)
		}
		if d.pattern != nil && !d.pattern.MatchString(a.Value) {
			return fmt.Errorf("%s: attribute %s=%q does not match %s", path, a.Name.Local, a.Value, d.pattern)
		}
	}
	for name, d := range t.attrs {
		if _, ok := attr(n, name); d.required && !ok {
			return fmt.Errorf("%s: required attribute %s is missing", path, name)
		}
	}
	if !t.mixed && strings.TrimSpace(n.text.String()) != "" {
		return fmt.Errorf("%s: text in an element that allows none", path)
	}
	names := make([]string, len(n.kids))
	for i, k := range n.kids {
		if k.name.Space != "" {
			return fmt.Errorf("%s: element <%s> in namespace %s", path, k.name.Local, k.name.Space)
		}
		names[i] = k.name.Local
	}
	if t.content == nil {
		if len(names) > 0 {
			return fmt.Errorf("%s: elements %v in an element that allows none", path, names)
		}
		return nil
	}
	if !t.content.match(names, map[int]bool{0: true})[len(names)] {
		return fmt.Errorf("%s: elements %v do not fit its content model", path, names)
	}
	for i, k := range n.kids {
		d := t.content.decl(k.name.Local)
		if d == nil {
			d = s.elements[k.name.Local]
		}
		if d == nil {
			return fmt.Errorf("%s: undeclared element <%s>", path, k.name.Local)
		}
		if err := s.validate(k, d, fmt.Sprintf("%s/%s[%d]", path, k.name.Local, i+1)); err != nil {
			return err
		}
	}
	return nil
}

// decl is the local declaration of a child named name, or nil for one that
// refers to a global element.
func (p *particle) decl(name string) *element {
	if p.kind == "element" {
		if p.ref == name {
			return p.elem
		}
		return nil
	}
	for _, k := range p.kids {
		if d := k.decl(name); d != nil {
			return d
		}
	}
	return nil
}

// match returns the positions in names the particle can end at when it
// starts at any of from.
func (p *particle) match(names []string, from map[int]bool) map[int]bool {
	out := map[int]bool{}
	if p.min == 0 {
		for i := range from {
			out[i] = true
		}
	}
	cur := from
	for k := 1; k <= p.max && len(cur) > 0; k++ {
		cur = p.once(names, cur)
		if k < p.min {
			continue
		}
		fresh := map[int]bool{}
		for i := range cur {
			if !out[i] {
				fresh[i] = true
				out[i] = true
			}
		}
		cur = fresh // positions reached before lead nowhere new
	}
	return out
}

func (p *particle) once(names []string, from map[int]bool) map[int]bool {
	switch p.kind {
	case "element":
		out := map[int]bool{}
		for i := range from {
			if i < len(names) && names[i] == p.ref {
				out[i+1] = true
			}
		}
		return out
	case "sequence":
		cur := from
		for _, k := range p.kids {
			cur = k.match(names, cur)
		}
		return cur
	default: // choice
		out := map[int]bool{}
		for _, k := range p.kids {
			for i := range k.match(names, from) {
				out[i] = true
			}
		}
		return out
	}
}
