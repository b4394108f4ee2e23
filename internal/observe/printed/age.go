package printed

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"strconv"
	"strings"
	"time"
)

// An age is how long ago kubectl says something happened: "57s", "3m2s",
// "5d15h", "<unknown>". kubectl truncates it: the printers use
// k8s.io/apimachinery/pkg/util/duration HumanDuration (two units, "3m2s",
// since kubectl 1.10's describe and the server-side tables) or, before,
// ShortHumanDuration (one unit, "3m"). Either way the true age is at least
// what is printed and less than one unit of the last printed part more.
var agePart = lazyregexp.New(`([0-9]+)([smhdy])`)

// ageRE matches a whole age.
const ageRE = `(?:[0-9]+[smhdy](?:[0-9]+[smhdy])?|<unknown>|<invalid>)`

var units = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "y": 365 * 24 * time.Hour}

// Age is a parsed age: at least D, less than D + Slack.
type Age struct {
	D, Slack time.Duration
	Text     string
}

// parseAge reads an age; ok is false for "<unknown>" and anything else.
// precise says whether the capture's printer is HumanDuration (two-part
// ages seen): a one-part "3m" from it is then exact to the second or the
// minute, as its magnitude says.
func parseAge(s string, precise bool) (Age, bool) {
	s = strings.TrimSpace(s)
	parts := agePart().FindAllStringSubmatch(s, -1)
	if len(parts) == 0 || len(parts) > 2 || strings.Join(flatten(parts), "") != s {
		return Age{}, false
	}
	var d time.Duration
	for _, p := range parts {
		n, err := strconv.Atoi(p[1])
		if err != nil || n > 1e6 {
			return Age{}, false
		}
		d += time.Duration(n) * units[p[2]]
	}
	last := units[parts[len(parts)-1][2]]
	slack := last
	if precise {
		slack = humanSlack(d, last)
	}
	return Age{D: d, Slack: slack, Text: s}, true
}

func flatten(parts [][]string) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p[0]
	}
	return out
}

// humanSlack is the truncation of HumanDuration at age d whose last
// printed unit is last: it prints seconds below 10 minutes, minutes below
// 8 hours, hours below 8 days, then days (a zero second or minute part is
// left out, so "3m" there is 3m0s).
func humanSlack(d, last time.Duration) time.Duration {
	switch {
	case d < 10*time.Minute:
		return time.Second
	case d < 3*time.Hour:
		return time.Minute
	case d < 8*time.Hour:
		return time.Minute
	case d < 48*time.Hour:
		return time.Hour
	case d < 8*24*time.Hour:
		return time.Hour
	}
	return last
}

// timestamp reads the absolute times old kubectl printed in its Events
// table and describe prints for container states: RFC 1123 with a numeric
// zone ("Mon, 13 Jul 2015 09:18:00 +0000"), or with a zone name.
func timestamp(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC1123Z, time.RFC1123, time.RFC3339, "Mon, 2 Jan 2006 15:04:05 -0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// timestampRE matches an RFC 1123 time as kubectl prints it.
const timestampRE = `(?:[A-Z][a-z]{2}, [0-9]{1,2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} (?:[-+][0-9]{4}|[A-Z]{3,4}))`

type timeT = time.Time
