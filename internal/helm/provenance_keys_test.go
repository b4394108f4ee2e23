package helm

import "testing"

// Templates that generate keys are left out of the second render, unless
// they define something another template may include.
func TestGeneratesKeys(t *testing.T) {
	for text, want := range map[string]bool{
		`{{- $ca := genCA "harbor-internal-ca" 365 }}`:                    true,
		`tls.key: {{ (genSelfSignedCert "x" nil nil 365).Key | b64enc }}`: true,
		`{{ define "x.cert" }}{{ genCA "x" 365 }}{{ end }}`:               false,
		`livenessProbe: {{ toYaml .Values.livenessProbe | nindent 2 }}`:   false,
		`# regenCAfile is not a function call: {{ .Values.regenCAfile }}`: false,
	} {
		if got := generatesKeys([]byte(text)); got != want {
			t.Errorf("generatesKeys(%q) = %v, want %v", text, got, want)
		}
	}
}
