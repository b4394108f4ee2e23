package report

import (
	"fmt"
	"strings"
)

// printable writes the control characters of s as escapes ("\x1b",
// "\u202e"), for the formats read on a terminal or in a CI log (text,
// short, github): an object name or a probe path that carries ESC or BEL
// must not drive the reader's terminal (colour it, retitle it, hide
// lines), nor reorder what is shown (the bidirectional overrides of
// "Trojan source"). Newlines are escaped too: every field is one line.
func printable(s string) string { return escape(s, false) }

// Printable is printable for the commands' own text around a report
// (diagnose's summary of what it read: names, containers and notes taken
// from a pasted capture).
func Printable(s string) string { return printable(s) }

// printableLines is printable for a text that may hold several lines
// (a GitHub annotation's message, whose line ends the runner's own
// escaping carries).
func printableLines(s string) string { return escape(s, true) }

func escape(s string, lines bool) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case lines && (r == '\n' || r == '\r'):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case bidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsEscape(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || bidi(r) {
			return true
		}
	}
	return false
}

// bidi reports the explicit directional formatting characters (embedding,
// override and isolate: U+202A to U+202E, U+2066 to U+2069).
func bidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
