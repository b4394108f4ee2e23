// Package redact masks secrets written literally in the text a finding
// quotes from a manifest: a probe command that carries its password
// (mysqladmin ping -psecret, redis-cli -a secret, PGPASSWORD=secret psql,
// curl -u user:secret) would otherwise be printed verbatim in every
// report, CI log and admission warning. A value that is a reference
// ($PASSWORD, ${PASSWORD}, $(PASSWORD)) reveals nothing and is kept: it
// says where the secret comes from.
package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"backfire.dev/backfire/internal/finding"
)

// Mask replaces a secret's characters.
const Mask = "****"

// value is what follows a secret's option: a quoted string or a word.
const value = `("[^"]*"|'[^']*'|[^\s"']+)`

// longNames are the long options that take a credential.
const longNames = `(?:password|passwd|pass|pwd|token|secret|auth|api-?key|access-?key|secret-?key|client-?secret|requirepass)`

var (
	// --password=x, --password x (and the other long options that take
	// a credential).
	longOption = regexp.MustCompile(`(?i)(--` + longNames + `(?:=|[ \t]+))` + value)
	// NAME=x for environment variables that hold credentials
	// (PGPASSWORD, MYSQL_PWD, REDISCLI_AUTH, MONGO_INITDB_ROOT_PASSWORD).
	envAssignment = regexp.MustCompile(`(?i)(\b[a-z_]*(?:password|passwd|pwd|secret|token|apikey|api_key|auth)[a-z0-9_]*=)` + value)
	// scheme://user:x@host
	urlCredentials = regexp.MustCompile(`(://[^/\s:@]+:)([^/\s@]+)(@)`)
	// curl -u user:x, -fsu user:x, --user user:x
	userPassword = regexp.MustCompile(`((?:^|\s)(?:-[a-zA-Z]*u|--user)[ \t]+["']?[^\s:"']+:)([^\s"']+)`)
	// Authorization: Bearer x / Basic x
	authorization = regexp.MustCompile(`(?i)(authorization:\s*(?:bearer|basic|token)\s+)([^\s"']+)`)
	// mysql -px (attached: "-p x" asks for the password and takes x as
	// the database), mongo/mongosh -p x, redis-cli -a x (its -p is the
	// port).
	mysqlShort = regexp.MustCompile(`((?:^|\s)-p)([^\s"'-][^\s"']*|"[^"]*"|'[^']*')`)
	mongoShort = regexp.MustCompile(`((?:^|\s)-p[ \t]+)` + value)
	redisShort = regexp.MustCompile(`((?:^|\s)-a[ \t]+)` + value)
	mysqlish   = regexp.MustCompile(`\b(?:mysql|mysqladmin|mariadb|mariadb-admin|mysqlshow|mysqldump)\b`)
	mongoish   = regexp.MustCompile(`\b(?:mongo|mongosh)\b`)
)

// clients says which command-line clients a text runs, for their short
// options.
type clients struct{ mysql, mongo, redis bool }

func clientsOf(s string) clients {
	return clients{
		mysql: (strings.Contains(s, "mysql") || strings.Contains(s, "mariadb")) && mysqlish.MatchString(s),
		mongo: strings.Contains(s, "mongo") && mongoish.MatchString(s),
		redis: strings.Contains(s, "redis-cli"),
	}
}

// Text masks the literal secrets of s.
func Text(s string) string {
	if s == "" {
		return s
	}
	memo.RLock()
	out, ok := memo.texts[s]
	memo.RUnlock()
	if ok {
		return out
	}
	out = mask(s, clientsOf(s))
	if out != s {
		return out // not remembered: the memo would hold the secret
	}
	memo.Lock()
	if len(memo.texts) < memoLimit {
		memo.texts[s] = out
	}
	memo.Unlock()
	return out
}

// memo holds the texts found to hold no secret. Findings repeat their
// texts: a rule words its mechanism and its fix the same way for every
// container with the same numbers, and masking a text costs a search per
// pattern. A text that held a secret is masked again each time, so that
// a long-running process (the webhook) keeps no secret in its memo.
var memo = struct {
	sync.RWMutex
	texts map[string]string
}{texts: map[string]string{}}

// memoLimit bounds the memo (a few megabytes of text); texts past it are
// masked each time.
const memoLimit = 1 << 14

// mask masks s, knowing which clients the command it is part of runs: a
// MySQL client (-px is a password), a MongoDB one (-p x), redis-cli (-a
// x).
func mask(s string, c clients) string {
	return maskWith(s, c, true)
}

// maskWith masks s; with filter, a pattern runs only where what it cannot
// match without is in s (every finding's texts pass here, and most hold
// none of them). Without, every pattern runs: the test holds the two to
// the same output.
func maskWith(s string, c clients, filter bool) string {
	// (?i) folds non-ASCII letters onto ASCII ones (ſ onto s, the Kelvin
	// sign onto k): the case-insensitive filters hold only for ASCII text.
	folds := !filter || !isASCII(s)
	if !filter || strings.Contains(s, "--") && (folds || hasLongOption(s)) {
		s = maskAfter(longOption, s)
	}
	if !filter || strings.Contains(s, "=") && (folds || secretWords.in(s)) {
		s = maskAfter(envAssignment, s)
	}
	if !filter || strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = maskAfter(urlCredentials, s)
	}
	if !filter || strings.Contains(s, ":") && hasUserOption(s) {
		s = maskAfter(userPassword, s)
	}
	if !filter || folds || authorizationWord.in(s) {
		s = maskAfter(authorization, s)
	}
	if c.mysql && (!filter || strings.Contains(s, "-p")) {
		s = maskAfter(mysqlShort, s)
	}
	if c.mongo && (!filter || strings.Contains(s, "-p")) {
		s = maskAfter(mongoShort, s)
	}
	if c.redis && (!filter || strings.Contains(s, "-a")) {
		s = maskAfter(redisShort, s)
	}
	return s
}

// foldWords finds lower-case words in ASCII text in any case, in one pass
// and without lower-casing a copy of the text: the filters ask it of every
// text of every finding, and the copies cost more than the masking they
// spared. Each byte is looked up once; only a word's first letter starts
// a comparison.
type foldWords struct {
	first [256][]string // the words by their first letter, in both cases
}

func newFoldWords(words ...string) *foldWords {
	w := &foldWords{}
	for _, word := range words {
		c := word[0]
		w.first[c] = append(w.first[c], word)
		if 'a' <= c && c <= 'z' {
			w.first[c-'a'+'A'] = append(w.first[c-'a'+'A'], word)
		}
	}
	return w
}

// in reports whether ASCII s holds one of the words, in any case.
func (w *foldWords) in(s string) bool {
	for i := 0; i < len(s); i++ {
		for _, word := range w.first[s[i]] {
			if hasFoldAt(s, i, word) {
				return true
			}
		}
	}
	return false
}

var (
	secretWords       = newFoldWords("pass", "pwd", "secret", "token", "apikey", "api_key", "auth")
	authorizationWord = newFoldWords("authorization")
)

// hasFoldAt reports whether s holds the lower-case needle at i, in any case.
func hasFoldAt(s string, i int, needle string) bool {
	if len(s)-i < len(needle) {
		return false
	}
	for j := 0; j < len(needle); j++ {
		if lowerASCII(s[i+j]) != needle[j] {
			return false
		}
	}
	return true
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// longStarts are how longNames begin.
var longStarts = []string{"pass", "pwd", "token", "secret", "auth", "api", "access", "client", "requirepass"}

// hasLongOption reports whether ASCII s has "--" followed, in any case, by
// the start of a long option longOption knows.
func hasLongOption(s string) bool {
	for i := strings.Index(s, "--"); i >= 0; {
		rest := s[i+2:]
		for _, p := range longStarts {
			if len(rest) >= len(p) && strings.EqualFold(rest[:len(p)], p) {
				return true
			}
		}
		j := strings.Index(s[i+1:], "--")
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// hasUserOption reports whether s has what userPassword starts with: at
// the start or after a space, "--user" or a dash and letters ending in
// "u", then a space or a tab.
func hasUserOption(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '-' || i > 0 && !isSpace(s[i-1]) {
			continue
		}
		j := i + 1
		if strings.HasPrefix(s[j:], "-user") {
			j += len("-user")
		} else {
			for j < len(s) && ('a' <= s[j] && s[j] <= 'z' || 'A' <= s[j] && s[j] <= 'Z') {
				j++
			}
			if s[j-1] != 'u' {
				continue
			}
		}
		if j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			return true
		}
	}
	return false
}

// isSpace is \s of the patterns.
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r'
}

var (
	// listItem is a line of a YAML list: "- value".
	listItem     = regexp.MustCompile(`^(\s*-\s+)(.*?)\s*$`)
	secretOption = regexp.MustCompile(`(?i)^["']?(--` + longNames + `|-[pa])["']?$`)
)

// Lines masks lines of a manifest (an excerpt around a finding) as Text
// masks a command, the command's program read from all of them; and
// where a command is written one argument per line ("- --password",
// "- secret"), the item after an option that takes a credential.
func Lines(lines []string) []string {
	c := clientsOf(strings.Join(lines, "\n"))
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = mask(l, c)
		if i == 0 {
			continue
		}
		prev, cur := listItem.FindStringSubmatch(lines[i-1]), listItem.FindStringSubmatch(l)
		if prev == nil || cur == nil || !secretOption.MatchString(prev[2]) {
			continue
		}
		if opt := strings.Trim(prev[2], `"'`); (opt == "-p" && !c.mongo) || (opt == "-a" && !c.redis) {
			continue // mysql's "-p" alone asks for the password; redis-cli's is the port
		}
		if literal(cur[2]) != "" {
			out[i] = cur[1] + Mask
		}
	}
	return out
}

// maskAfter masks the second group of every match of re, unless it is a
// reference to a variable; what closes the quoted text around it (a "]"
// of "exec [...]", a quote, a ";") stays.
func maskAfter(re *regexp.Regexp, s string) string {
	return re.ReplaceAllStringFunc(s, func(m string) string {
		g := re.FindStringSubmatchIndex(m)
		if g == nil || g[4] < 0 {
			return m
		}
		v := m[g[4]:g[5]]
		if literal(v) == "" {
			return m
		}
		quote := ""
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			quote = v[:1]
		}
		tail := ""
		if quote == "" {
			trimmed := strings.TrimRight(v, "]);,`")
			tail, v = v[len(trimmed):], trimmed
			if v == "" {
				return m
			}
		}
		return m[:g[4]] + quote + Mask + quote + tail + m[g[5]:]
	})
}

// literal returns v without quotes, or "" when v is empty, a reference
// to a variable, or already masked.
func literal(v string) string {
	v = strings.Trim(v, `"'`)
	if v == "" || v == Mask || strings.HasPrefix(v, "$") || strings.HasPrefix(v, "%") {
		return ""
	}
	return v
}

// Finding masks every text of a finding that may quote the manifest:
// the message, the mechanism, the assumptions, the evidence's strings and
// the fix's description. The fix's patch is left alone: it is what fix
// writes, and it never carries a command.
func Finding(f *finding.Finding) {
	f.Message = Text(f.Message)
	f.Mechanism, _ = texts(f.Mechanism)
	f.Assumptions, _ = texts(f.Assumptions)
	if f.Evidence != nil {
		ev, _ := evidence(f.Evidence)
		f.Evidence = ev.(map[string]any)
	}
	if f.Fix != nil && Text(f.Fix.Description) != f.Fix.Description {
		fix := *f.Fix // may be shared with the object's other findings
		fix.Description = Text(fix.Description)
		f.Fix = &fix
	}
}

// texts masks a list into a new one where a text changes (the list may be
// shared), and says whether one did.
func texts(list []string) ([]string, bool) {
	for i, s := range list {
		if m := Text(s); m != s {
			out := slices.Clone(list)
			out[i] = m
			for j := i + 1; j < len(out); j++ {
				out[j] = Text(out[j])
			}
			return out, true
		}
	}
	return list, false
}

// evidence masks the strings of an evidence value into a copy where one
// changes (the value may be shared), and says whether one did.
func evidence(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		// v is returned as it came, not x boxed again: most strings hold
		// no secret, and boxing each cost an allocation.
		if m := Text(x); m != x {
			return m, true
		}
	case []string:
		return texts(x)
	case []any:
		for i, e := range x {
			if m, changed := evidence(e); changed {
				out := slices.Clone(x)
				out[i] = m
				for j := i + 1; j < len(out); j++ {
					out[j], _ = evidence(out[j])
				}
				return out, true
			}
		}
	case map[string]any:
		for k, e := range x {
			if m, changed := evidence(e); changed {
				out := make(map[string]any, len(x))
				for k2, e2 := range x {
					if k2 == k {
						out[k2] = m
					} else {
						out[k2], _ = evidence(e2)
					}
				}
				return out, true
			}
		}
	}
	return v, false
}
