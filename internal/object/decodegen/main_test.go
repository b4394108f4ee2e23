package main

import (
	"bytes"
	"os"
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
