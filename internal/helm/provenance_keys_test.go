package helm

import "testing"

// The random calls of a template are rewritten to fixed ones, and nothing
// else: fields, variables, strings and comments that carry the names stay.
func TestStubTemplate(t *testing.T) {
	for text, want := range map[string]string{
		`{{- $ca := genCA "harbor-internal-ca" 365 }}`:                    `{{- $ca := dict "Cert" "trial-certificate" "Key" "trial-key" "harbor-internal-ca" 365 }}`,
		`tls.key: {{ (genSelfSignedCert "x" nil nil 365).Key | b64enc }}`: `tls.key: {{ (dict "Cert" "trial-certificate" "Key" "trial-key" "x" nil nil 365).Key | b64enc }}`,
		`{{ define "x.cert" }}{{ genCA "x" 365 }}{{ end }}`:               `{{ define "x.cert" }}{{ dict "Cert" "trial-certificate" "Key" "trial-key" "x" 365 }}{{ end }}`,
		`rollme: {{ randAlphaNum 5 | quote }}`:                            `rollme: {{ print "trial" 5 | quote }}`,
		`at: {{ now | date "2006" }} {{ $now := .Values.now }}{{ $now }}`: `at: {{ (toDate "2006-01-02" "2000-01-01") | date "2006" }} {{ $now := .Values.now }}{{ $now }}`,
		`now: randAlphaNum {{ "now" }} {{/* now */}}`:                     `now: randAlphaNum {{ "now" }} {{/* now */}}`,
		`# regenCAfile is not a function call: {{ .Values.regenCAfile }}`: `# regenCAfile is not a function call: {{ .Values.regenCAfile }}`,
	} {
		got, _ := stubTemplate(text)
		if got != want {
			t.Errorf("stubTemplate(%q)\n = %q\nwant %q", text, got, want)
		}
	}
}
