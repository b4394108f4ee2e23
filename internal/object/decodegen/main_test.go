package main

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestGeneratedFileIsCurrent: decode_gen.go is what the generator writes
// from the upstream types now (run `go generate ./internal/object` after
// upgrading them).
func TestGeneratedFileIsCurrent(t *testing.T) {
	want, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../decode_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("decode_gen.go is out of date: run go generate ./internal/object")
	}
}

// TestNoRecursiveType: no generated struct reaches itself through its
// fields. The generated decoders recurse as deep as the types nest, each
// struct through readObject, which counts json-iterator's depth as its
// struct decoder does; a recursive type would let a document nest them as
// deep as the 10000 levels that count allows, through lists that count
// nothing, and would need a depth of its own.
func TestNoRecursiveType(t *testing.T) {
	g := newGenerator()
	if len(g.structs) < 100 {
		t.Fatalf("only %d generated structs", len(g.structs))
	}
	for _, path := range recursions(g.structs) {
		t.Errorf("recursive type: %s", path)
	}
}

// TestRecursionIsFound: recursions finds a type that reaches itself
// through a list, a pointer or a map, and through another type.
func TestRecursionIsFound(t *testing.T) {
	type node struct {
		Children []node           `json:"children"`
		Next     *node            `json:"next"`
		ByName   map[string]*node `json:"byName"`
	}
	type b struct{}
	type a struct {
		B b `json:"b"`
	}
	type other struct {
		A a `json:"a"`
	}
	g := &generator{structs: map[reflect.Type][]field{}, refused: map[reflect.Type]bool{}, imports: map[string]string{}}
	g.visit(reflect.TypeFor[node]())
	g.visit(reflect.TypeFor[other]())
	if got := recursions(g.structs); len(got) != 3 {
		t.Errorf("found %q, want node's three fields", got)
	}
	delete(g.structs, reflect.TypeFor[node]())
	if got := recursions(g.structs); len(got) != 0 {
		t.Errorf("found %q in types that do not recurse", got)
	}
}

// recursions lists the paths by which a struct of structs reaches itself.
func recursions(structs map[reflect.Type][]field) []string {
	const (
		visiting = 1
		done     = 2
	)
	var found []string
	state := map[reflect.Type]int{}
	var walk func(reflect.Type, []string)
	walk = func(s reflect.Type, path []string) {
		switch state[s] {
		case visiting:
			found = append(found, strings.Join(append(path, s.String()), " -> "))
			return
		case done:
			return
		}
		state[s] = visiting
		for _, f := range structs[s] {
			for _, r := range reachedStructs(f.typ) {
				if _, ok := structs[r]; ok {
					walk(r, append(path, s.String()+"."+f.path))
				}
			}
		}
		state[s] = done
	}
	for s := range structs {
		walk(s, nil)
	}
	return found
}

// reachedStructs are the structs a value of t holds directly or through
// pointers, slices, arrays and maps.
func reachedStructs(t reflect.Type) []reflect.Type {
	switch t.Kind() {
	case reflect.Struct:
		return []reflect.Type{t}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return reachedStructs(t.Elem())
	case reflect.Map:
		return append(reachedStructs(t.Key()), reachedStructs(t.Elem())...)
	}
	return nil
}
