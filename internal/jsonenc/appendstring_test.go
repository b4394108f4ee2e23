package jsonenc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/testutil"
)

// stringEqual fails the test when AppendString and encoding/json differ
// on s, with HTML escaping on and off.
func stringEqual(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := AppendString(nil, s, true); !bytes.Equal(got, want) {
		t.Fatalf("%.300q with HTML escaping:\n got %.300s\nwant %.300s", s, got, want)
	}
	var noHTML bytes.Buffer
	enc := json.NewEncoder(&noHTML)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	if got := AppendString(nil, s, false); !bytes.Equal(got, bytes.TrimSuffix(noHTML.Bytes(), []byte("\n"))) {
		t.Fatalf("%.300q without HTML escaping:\n got %.300s\nwant %.300s", s, got, noHTML.Bytes())
	}
}

// Every byte value at every place of the eight-byte blocks AppendString
// tests at once, before, after and among other bytes that need escaping,
// so that a byte it flags wrongly, or misses, shows.
func TestAppendStringEveryByteEverywhere(t *testing.T) {
	fillers := []string{"abcdefghijklmnopqrstuvwxyz", "\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"", "<a&b>c\\d\x01e\x7ff\x80g\xe2\x80\xa8h", "ééééééééééé"}
	for _, filler := range fillers {
		for c := range 256 {
			for at := range 20 {
				if at > len(filler) {
					break
				}
				s := filler[:at] + string([]byte{byte(c)}) + filler[at:]
				stringEqual(t, s)
				stringEqual(t, s[:len(s)-1])
			}
		}
	}
	// Two bytes to escape in one block, each after the other.
	for _, pair := range []string{"\x00\"", "\"\x00", "\\<", "&\x1f", "\x80\x20", "\x1f\x20", "\x20\x1f"} {
		for at := range 17 {
			stringEqual(t, strings.Repeat("x", at)+pair+strings.Repeat("y", 9))
		}
	}
}

// Every line and every whole manifest of the shared benchmark's corpus
// and of the repository's, as AppendString writes the converted documents
// and the findings about them.
func TestAppendStringOnManifests(t *testing.T) {
	dir := t.TempDir()
	if _, err := benchcorpus.Generate(dir, 20); err != nil {
		t.Fatal(err)
	}
	n := 0
	testutil.EachYAML(t, []string{dir, "../../testdata", "../../examples"}, func(p string, data []byte) {
		stringEqual(t, string(data))
		for line := range strings.Lines(string(data)) {
			stringEqual(t, line)
			n++
		}
	})
	if n < 10000 {
		t.Errorf("compared only %d lines", n)
	}
}

// FuzzAppendString holds AppendString to encoding/json, with HTML
// escaping on and off.
//
//	go test ./internal/jsonenc -run '^$' -fuzz FuzzAppendString -fuzztime 1m
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain text of a message, long enough for blocks", "<&>\u2028\u2029", "\xff\xfe\x00\x1f\"\\", "ſ K é 日本 \xe2\x80", "0123456\x00789abcdef"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		stringEqual(t, s)
	})
}

func BenchmarkAppendString(b *testing.B) {
	s := "memory request 128Mi is below the limit 512Mi: the container is scheduled on a node with room for 128Mi and can grow to 512Mi, so under pressure it is killed first"
	b.SetBytes(int64(len(s)))
	var buf []byte
	for b.Loop() {
		buf = AppendString(buf[:0], s, false)
	}
}
