package browser

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenReadsDOMAndScreenshot(t *testing.T) {
	f := filepath.Join(t.TempDir(), "p.html")
	html := `<!DOCTYPE html><html><body><h1 class="x">Hello</h1><svg width="400" height="200"><rect width="400" height="200" fill="#1f77b4"/></svg></body></html>`
	if err := os.WriteFile(f, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Open(t, f)
	if n := p.Count("h1.x"); n != 1 {
		t.Fatalf("h1.x count = %d, want 1", n)
	}
	if !strings.Contains(p.Text(), "Hello") {
		t.Fatalf("text lacks Hello: %q", p.Text())
	}
	NotBlank(t, p.Screenshot())
}

func TestNotBlankRejectsOneColour(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 100, 100))
	for y := 0; y < 100; y++ {
		for x := 0; x < 100; x++ {
			img.Set(x, y, color.White)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if frac := inkFraction(img); frac != 0 {
		t.Fatalf("white image ink = %v", frac)
	}
	ft := &fakeT{TB: t}
	NotBlank(ft, buf.Bytes())
	if !ft.failed {
		t.Fatal("NotBlank accepted a blank screenshot")
	}
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(string, ...any) {
	f.failed = true
}
