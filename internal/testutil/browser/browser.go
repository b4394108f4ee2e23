// Package browser checks pages as a person sees them: it opens a file in
// headless Chromium (Debian's chromium package, driven with chromedp), reads
// the DOM and takes a screenshot.
package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backfire.dev/backfire/internal/testutil"
)

// execPath finds the browser: $CHROMIUM, then Debian's names.
func execPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium on PATH: install Debian's chromium package (.ci/run does)")
	return ""
}

// Page is a page loaded in the browser.
type Page struct {
	ctx context.Context
	t   testing.TB
}

// Open loads the HTML file in a fresh headless browser with no network
// beyond the file itself; the browser closes when the test ends.
func Open(t testing.TB, htmlFile string) *Page {
	t.Helper()
	testutil.Heavy(t, "a headless Chromium")
	abs, err := filepath.Abs(htmlFile)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath(t)),
		chromedp.NoSandbox, // tests run as root
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1024),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("open %s in the browser: %v", htmlFile, err)
	}
	return &Page{ctx: ctx, t: t}
}

// Count returns how many elements match the CSS selector.
func (p *Page) Count(selector string) int {
	p.t.Helper()
	n, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+quote(selector)+`).length`))
	if err != nil {
		p.t.Fatalf("count %s: %v", selector, err)
	}
	return n
}

// Text returns the page's visible text.
func (p *Page) Text() string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		p.t.Fatalf("read text: %v", err)
	}
	return s
}

// Viewport resizes the page's viewport, as a laptop's or a phone's screen
// (the CSS width; the page lays itself out again).
func (p *Page) Viewport(width, height int) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		p.t.Fatalf("viewport %dx%d: %v", width, height, err)
	}
}

// Click sends a mouse click to the first element the CSS selector matches.
func (p *Page) Click(selector string) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(selector))); err != nil {
		p.t.Fatalf("click %s: %v", selector, err)
	}
}

// Choose selects value in the <select> the CSS selector matches and fires
// its change event, as a person choosing the option does.
func (p *Page) Choose(selector, value string) {
	p.t.Helper()
	js := `(function(){var s=document.querySelector(` + quote(selector) + `);if(!s)return false;s.value=` + quote(value) +
		`;if(s.value!==` + quote(value) + `)return false;s.dispatchEvent(new Event("change",{bubbles:true}));return true})()`
	ok, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](js))
	if err != nil || !ok {
		p.t.Fatalf("choose %q in %s: %v (no such select or option)", value, selector, err)
	}
}

// Type sends the text as key presses to the element the CSS selector
// matches.
func (p *Page) Type(selector, text string) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.SendKeys(chromedp.CSS(selector), text)); err != nil {
		p.t.Fatalf("type into %s: %v", selector, err)
	}
}

// Eval returns the string a JavaScript expression evaluates to.
func (p *Page) Eval(js string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		p.t.Fatalf("eval %s: %v", js, err)
	}
	return s
}

// Visible returns how many elements match the CSS selector and are shown
// (neither they nor an ancestor is hidden, nor inside a closed <details>).
func (p *Page) Visible(selector string) int {
	p.t.Helper()
	n, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`Array.prototype.filter.call(document.querySelectorAll(`+quote(selector)+`),function(e){return e.checkVisibility()}).length`))
	if err != nil {
		p.t.Fatalf("visible %s: %v", selector, err)
	}
	return n
}

// Rect is an element's box in CSS pixels, relative to the viewport.
type Rect struct{ Left, Top, Right, Bottom float64 }

// Overlaps reports whether two boxes share more than a pixel each way.
func (r Rect) Overlaps(o Rect) bool {
	return min(r.Right, o.Right)-max(r.Left, o.Left) > 1 && min(r.Bottom, o.Bottom)-max(r.Top, o.Top) > 1
}

// Rects returns the boxes of the elements the CSS selector matches, in
// document order.
func (p *Page) Rects(selector string) []Rect {
	p.t.Helper()
	js := `JSON.stringify(Array.prototype.map.call(document.querySelectorAll(` + quote(selector) +
		`),function(e){var r=e.getBoundingClientRect();return {Left:r.left,Top:r.top,Right:r.right,Bottom:r.bottom}}))`
	var rects []Rect
	if err := json.Unmarshal([]byte(p.Eval(js)), &rects); err != nil {
		p.t.Fatalf("rects of %s: %v", selector, err)
	}
	return rects
}

// Overflow returns how many CSS pixels the page is wider than the
// viewport: more than 0 scrolls the whole page sideways.
func (p *Page) Overflow() int {
	p.t.Helper()
	n, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth-document.documentElement.clientWidth`))
	if err != nil {
		p.t.Fatalf("overflow: %v", err)
	}
	return n
}

// Screenshot returns a PNG of the whole page.
func (p *Page) Screenshot() []byte {
	p.t.Helper()
	buf, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100)) // quality 100 is PNG, below is JPEG
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	return buf
}

// Shot takes a screenshot of the whole page, checks it is not blank, and
// keeps it as NAME.png in $BACKFIRE_SCREENSHOTS when that is set, to be
// looked at.
func Shot(t testing.TB, p *Page, name string) {
	t.Helper()
	png := p.Screenshot()
	NotBlank(t, png)
	if dir := os.Getenv("BACKFIRE_SCREENSHOTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// NotBlank fails the test unless the PNG has enough pixels that differ from
// its top-left corner: a page that rendered nothing is one colour.
func NotBlank(t testing.TB, pngData []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if frac := inkFraction(img); frac < 0.005 {
		t.Fatalf("screenshot is blank: %.4f%% of pixels differ from the background", frac*100)
	}
}

func inkFraction(img image.Image) float64 {
	b := img.Bounds()
	bg := img.At(b.Min.X, b.Min.Y)
	br, bgc, bb, _ := bg.RGBA()
	var differ, all int
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if diff(r, br)+diff(g, bgc)+diff(bl, bb) > 0x3000 {
				differ++
			}
			all++
		}
	}
	if all == 0 {
		return 0
	}
	return float64(differ) / float64(all)
}

func diff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func quote(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// Widths are the screens pages are checked at: a laptop's and a phone's
// CSS width.
var Widths = []int{1366, 390}

// CheckLegible fails the test unless, at the page's current viewport, the
// page does not scroll sideways and every entry the legend selector matches
// is shown, inside the viewport's width, and overlaps no other entry.
func CheckLegible(t testing.TB, p *Page, legend string, width int) {
	t.Helper()
	if o := p.Overflow(); o > 0 {
		t.Errorf("at %d px the page is %d px too wide", width, o)
	}
	rects := p.Rects(legend)
	if len(rects) == 0 {
		t.Fatalf("at %d px no legend entry (%s)", width, legend)
	}
	if v := p.Visible(legend); v != len(rects) {
		t.Errorf("at %d px %d of %d legend entries are shown", width, v, len(rects))
	}
	for i, r := range rects {
		if r.Left < 0 || r.Right > float64(width) || r.Right-r.Left < 20 {
			t.Errorf("at %d px legend entry %d is at %.0f..%.0f px", width, i, r.Left, r.Right)
		}
		for j := i + 1; j < len(rects); j++ {
			if r.Overlaps(rects[j]) {
				t.Errorf("at %d px legend entries %d and %d overlap: %+v %+v", width, i, j, r, rects[j])
			}
		}
	}
}
