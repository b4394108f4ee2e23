package redact

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"exec [mysqladmin ping -h 127.0.0.1 -uroot -phunter2]", "exec [mysqladmin ping -h 127.0.0.1 -uroot -p****]"},
		{"exec [sh -c mysql -uroot -p'hunter 2' -e 'SELECT 1']", "exec [sh -c mysql -uroot -p'****' -e 'SELECT 1']"},
		{"exec [mysqladmin ping -p]", "exec [mysqladmin ping -p]"},
		{"exec [mysqladmin ping -p$MYSQL_ROOT_PASSWORD]", "exec [mysqladmin ping -p$MYSQL_ROOT_PASSWORD]"},
		{"exec [redis-cli -a s3cret ping]", "exec [redis-cli -a **** ping]"},
		{"exec [mongosh -u admin -p s3cret --eval db.adminCommand('ping')]", "exec [mongosh -u admin -p **** --eval db.adminCommand('ping')]"},
		{"exec [sh -c PGPASSWORD=s3cret psql -h localhost -c 'SELECT 1']", "exec [sh -c PGPASSWORD=**** psql -h localhost -c 'SELECT 1']"},
		{"exec [sh -c MYSQL_PWD=\"a b\" mysqladmin ping]", "exec [sh -c MYSQL_PWD=\"****\" mysqladmin ping]"},
		{"exec [pg_isready --password=s3cret]", "exec [pg_isready --password=****]"},
		{"exec [cli --token abc123; echo ok]", "exec [cli --token ****; echo ok]"},
		{"exec [curl -fsu elastic:changeme http://localhost:9200]", "exec [curl -fsu elastic:**** http://localhost:9200]"},
		{"exec [curl -u elastic:changeme http://localhost:9200]", "exec [curl -u elastic:**** http://localhost:9200]"},
		{"exec [curl http://elastic:changeme@localhost:9200/_cluster/health]", "exec [curl http://elastic:****@localhost:9200/_cluster/health]"},
		{"exec [curl -H 'Authorization: Bearer eyJhbGciOi' http://x]", "exec [curl -H 'Authorization: Bearer ****' http://x]"},
		{"exec [sh -c redis-cli -a \"$REDIS_PASSWORD\" ping]", "exec [sh -c redis-cli -a \"$REDIS_PASSWORD\" ping]"},
		{"exec [pg_isready -p 5432]", "exec [pg_isready -p 5432]"},
		{"exec [sh -c redis-cli -p 26379 -e ping]", "exec [sh -c redis-cli -p 26379 -e ping]"},
		{"liveness probe httpGet :8080/healthz takes 3 s", "liveness probe httpGet :8080/healthz takes 3 s"},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
		if got := Text(Text(c.in)); got != c.want {
			t.Errorf("Text twice (%q): %q", c.in, got)
		}
	}
}

func TestLines(t *testing.T) {
	in := []string{
		"        livenessProbe:",
		"          exec:",
		"            command:",
		"            - mysqladmin",
		"            - ping",
		"            - -phunter2",
		"            - --password",
		"            - hunter2",
		"            - --user",
		"            - root",
	}
	want := slices.Clone(in)
	want[5] = "            - -p****"
	want[7] = "            - ****"
	if got := Lines(in); !slices.Equal(got, want) {
		t.Errorf("Lines:\n%q\nwant\n%q", got, want)
	}
}

// Every text of a finding that may quote the manifest is masked, and the
// lists and the fix, which other findings may share, are not written to.
func TestFinding(t *testing.T) {
	mech := []string{"exec [redis-cli -a s3cret ping] needs Redis to answer"}
	fix := &finding.Fix{Description: "replace exec [redis-cli -a s3cret ping] with tcpSocket", Patch: []byte(`{"a":1}`)}
	f := finding.Finding{
		Message:   "liveness probe exec [redis-cli -a s3cret ping] fails",
		Mechanism: mech,
		Evidence:  map[string]any{"probe": "exec [redis-cli -a s3cret ping]", "n": 3},
		Fix:       fix,
	}
	Finding(&f)
	if f.Message != "liveness probe exec [redis-cli -a **** ping] fails" || f.Mechanism[0] != "exec [redis-cli -a **** ping] needs Redis to answer" ||
		f.Evidence["probe"] != "exec [redis-cli -a **** ping]" || f.Evidence["n"] != 3 || f.Fix.Description != "replace exec [redis-cli -a **** ping] with tcpSocket" {
		t.Errorf("%+v", f)
	}
	if mech[0] != "exec [redis-cli -a s3cret ping] needs Redis to answer" || fix.Description != "replace exec [redis-cli -a s3cret ping] with tcpSocket" {
		t.Error("shared lists written to")
	}
}

// Texts without a secret are remembered; a text with one is masked again
// each time and not kept.
func TestMemoKeepsNoSecret(t *testing.T) {
	secret, clean := "exec [redis-cli -a m3mo ping]", "exec [redis-cli ping] answers PONG"
	for range 2 {
		if Text(secret) != "exec [redis-cli -a **** ping]" || Text(clean) != clean {
			t.Fatal("masking changed with the memo")
		}
	}
	memo.RLock()
	_, kept := memo.texts[secret]
	_, cleanKept := memo.texts[clean]
	memo.RUnlock()
	if kept || !cleanKept {
		t.Errorf("memo holds the secret's text: %v, the clean text: %v; want false, true", kept, cleanKept)
	}
}

// Evidence is masked at any depth into a copy, and evidence without a
// secret is kept as it is, not copied.
func TestEvidenceCopiesOnlyWhereItMasks(t *testing.T) {
	shared := map[string]any{
		"n":      3,
		"probes": []any{"tcpSocket :5432", map[string]any{"exec": []string{"ping", "redis-cli -a s3cret ping"}}},
		"clean":  map[string]any{"port": "5432"},
	}
	out, _ := evidence(shared)
	masked := out.(map[string]any)
	got := masked["probes"].([]any)[1].(map[string]any)["exec"].([]string)
	if got[0] != "ping" || got[1] != "redis-cli -a **** ping" || masked["n"] != 3 {
		t.Errorf("masked evidence %v", masked)
	}
	if shared["probes"].([]any)[1].(map[string]any)["exec"].([]string)[1] != "redis-cli -a s3cret ping" {
		t.Error("shared evidence written to")
	}
	clean := map[string]any{"n": 3, "list": []any{"a", []string{"b"}}, "m": map[string]any{"c": "d"}}
	if out, changed := evidence(clean); changed || reflect.ValueOf(out).UnsafePointer() != reflect.ValueOf(clean).UnsafePointer() {
		t.Error("evidence without a secret was copied")
	}
}

// FuzzFilter holds the filters that keep a pattern from running where it
// cannot match to running every pattern on every text.
//
//	go test ./internal/redact -run '^$' -fuzz FuzzFilter -fuzztime 1m
func FuzzFilter(f *testing.F) {
	for _, s := range []string{
		"exec [mysqladmin ping -h 127.0.0.1 -uroot -phunter2]",
		"exec [mongosh -u admin -p s3cret --eval db.adminCommand('ping')]",
		"exec [sh -c PGPASSWORD=s3cret psql -h localhost]",
		"exec [cli ---TOKEN abc123]", "exec [cli --paſſword abc]",
		"exec [curl -fsu elastic:changeme http://x]", "curl --user\ta:b", "-u a:b",
		"exec [curl http://elastic:changeme@localhost:9200/]",
		"exec [curl -H 'AUTHORIZATION: Bearer eyJhbGciOi']",
		"exec [sh -c redis-cli -a s3cret ping]",
		"the probe you set: 3 s", "liveness probe httpGet :8080/healthz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := clientsOf(s)
		if got, want := maskWith(s, c, true), maskWith(s, c, false); got != want {
			t.Errorf("%q: filtered %q, every pattern %q", s, got, want)
		}
	})
}

// TestFoldWords holds the in-place search to lower-casing a copy.
func TestFoldWords(t *testing.T) {
	needles := []string{"pass", "pwd", "secret", "token", "apikey", "api_key", "auth", "authorization"}
	texts := []string{"", "a", "PASS", "xPaSsWord", "pw", "PWD=1", "my_SECRET", "tok", "ToKeN", "API_KEY", "apiKey", "Authorizatio", "AUTHORIZATION: Bearer x", "--user a:b", "pas", "authoriZation"}
	for _, s := range texts {
		for _, n := range needles {
			if got, want := newFoldWords(n).in(s), strings.Contains(strings.ToLower(s), n); got != want {
				t.Errorf("%q in %q = %v, want %v", n, s, got, want)
			}
		}
		want := false
		for _, n := range needles[:7] {
			want = want || strings.Contains(strings.ToLower(s), n)
		}
		if got := secretWords.in(s); got != want {
			t.Errorf("secretWords.in(%q) = %v, want %v", s, got, want)
		}
	}
}
