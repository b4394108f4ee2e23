package helm

import (
	"strings"

	"helm.sh/helm/v3/pkg/chart"
)

// Deterministic renders for backfire fix's trials.
//
// A trial render must differ from the chart's own render only where the
// trial's values reach. Templates that generate keys, certificates,
// passwords or timestamps differ at every render; leaving such a file out
// (as trial renders once did) hides every object it renders as well,
// often the workload itself beside its webhook's certificate. Helm's
// engine takes no functions of the caller's, so the calls are rewritten
// in the template text: each random function becomes a deterministic one
// of the same engine that takes the same arguments and gives a value of
// the same shape. sprig documents the functions:
// https://masterminds.github.io/sprig/crypto.html (genCA, genSignedCert,
// ... return an object with .Cert and .Key), strings.html (randAlphaNum),
// date.html (now), uuid.html (uuidv4), math.html (randInt).

// stubs maps each random function to what replaces its name: the call's
// own arguments follow the replacement.
var stubs = map[string]string{
	// A certificate: dict takes the call's arguments as extra keys.
	"genCA":                    `dict "Cert" "trial-certificate" "Key" "trial-key"`,
	"genCAWithKey":             `dict "Cert" "trial-certificate" "Key" "trial-key"`,
	"genSelfSignedCert":        `dict "Cert" "trial-certificate" "Key" "trial-key"`,
	"genSelfSignedCertWithKey": `dict "Cert" "trial-certificate" "Key" "trial-key"`,
	"genSignedCert":            `dict "Cert" "trial-certificate" "Key" "trial-key"`,
	"genSignedCertWithKey":     `dict "Cert" "trial-certificate" "Key" "trial-key"`,
	// Strings: print joins the call's arguments to a fixed text.
	"genPrivateKey": `print "trial-key"`,
	"randAlphaNum":  `print "trial"`,
	"randAlpha":     `print "trial"`,
	"randNumeric":   `print "0"`,
	"randAscii":     `print "trial"`,
	"randBytes":     `print "trial"`,
	"uuidv4":        `print "00000000-0000-4000-8000-000000000000"`,
	"bcrypt":        `print "trial-hash"`,
	"htpasswd":      `print "trial-hash"`,
	"encryptAES":    `print "trial-cipher"`,
	"shuffle":       `print`,
	// A number in [min, max): its lower bound.
	"randInt": `min`,
	// A time: a fixed one; now takes no arguments.
	"now": `(toDate "2006-01-02" "2000-01-01")`,
}

// stubRandomness rewrites the random calls of every template of a chart
// and its subcharts (see stubs); it returns a function that puts the
// templates back.
func stubRandomness(c *chart.Chart) (restore func()) {
	var undo []func()
	var walk func(c *chart.Chart)
	walk = func(c *chart.Chart) {
		for _, t := range c.Templates {
			if t == nil {
				continue
			}
			if out, ok := stubTemplate(string(t.Data)); ok {
				orig := t.Data
				t.Data = []byte(out)
				undo = append(undo, func() { t.Data = orig })
			}
		}
		for _, d := range c.Dependencies() {
			walk(d)
		}
	}
	walk(c)
	return func() {
		for _, f := range undo {
			f()
		}
	}
}

// stubTemplate rewrites the random calls in the actions of one template:
// a function's name, not a field (.now), a variable ($now), or text in a
// string or a comment. It reports whether anything changed.
func stubTemplate(src string) (string, bool) {
	if !mayCallRandom(src) {
		return src, false
	}
	var b strings.Builder
	changed := false
	i := 0
	for {
		open := strings.Index(src[i:], "{{")
		if open < 0 {
			b.WriteString(src[i:])
			break
		}
		open += i + 2
		b.WriteString(src[i:open])
		j := open
		for j < len(src) && !strings.HasPrefix(src[j:], "}}") {
			c := src[j]
			switch {
			case c == '"' || c == '`' || c == '\'':
				end := quoteEnd(src, j)
				b.WriteString(src[j:end])
				j = end
			case strings.HasPrefix(src[j:], "/*"):
				end := strings.Index(src[j:], "*/")
				if end < 0 {
					end = len(src) - j - 2
				}
				b.WriteString(src[j : j+end+2])
				j += end + 2
			case isIdentStart(c):
				k := j
				for k < len(src) && isIdentChar(src[k]) {
					k++
				}
				word := src[j:k]
				prev := byte(' ')
				if j > 0 {
					prev = src[j-1]
				}
				if rep, ok := stubs[word]; ok && prev != '.' && prev != '$' && !isIdentChar(prev) {
					b.WriteString(rep)
					changed = true
				} else {
					b.WriteString(word)
				}
				j = k
			default:
				b.WriteByte(c)
				j++
			}
		}
		i = j
	}
	if !changed {
		return src, false
	}
	return b.String(), true
}

// mayCallRandom is a quick test before the rewrite: the text names one
// of the functions.
func mayCallRandom(src string) bool {
	for name := range stubs {
		if strings.Contains(src, name) {
			return true
		}
	}
	return false
}

// quoteEnd is the index just past the string or character literal that
// starts at i (to the end of the text if it is not closed).
func quoteEnd(src string, i int) int {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			return j + 1
		}
	}
	return len(src)
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }
