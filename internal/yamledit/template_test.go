package yamledit

import (
	"strings"
	"testing"
)

const probeTemplate = `      containers:
      - name: database
        livenessProbe:
          exec:
            command:
            - /docker-healthcheck.sh
          timeoutSeconds: {{ .Values.timeout }}
        readinessProbe:
          exec:
            command:
            - /docker-healthcheck.sh
{{- if .Values.resources }}
        resources: {}
{{- end }}
`

var execHandler = map[string]any{"command": []any{"/docker-healthcheck.sh"}}

func TestReplaceLiteralHandler(t *testing.T) {
	got, err := ReplaceLiteralHandler([]byte(probeTemplate), "livenessProbe", "exec", execHandler, "tcpSocket", map[string]any{"port": 5432})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(probeTemplate, `          exec:
            command:
            - /docker-healthcheck.sh
          timeoutSeconds`, `          tcpSocket:
            port: 5432
          timeoutSeconds`, 1)
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// The readiness probe's identical block is not touched, and a second
	// run changes nothing.
	again, err := ReplaceLiteralHandler(got, "livenessProbe", "exec", execHandler, "tcpSocket", map[string]any{"port": 5432})
	if err != nil || string(again) != string(got) {
		t.Errorf("second run: err %v, changed: %v", err, string(again) != string(got))
	}
}

// A handler block holding a template action is not edited: the rendered
// value may come from anywhere.
func TestReplaceLiteralHandlerRefusesTemplateActions(t *testing.T) {
	src := strings.Replace(probeTemplate, "            - /docker-healthcheck.sh\n          timeoutSeconds", "            - {{ .Values.check }}\n          timeoutSeconds", 1)
	_, err := ReplaceLiteralHandler([]byte(src), "livenessProbe", "exec", execHandler, "tcpSocket", map[string]any{"port": 5432})
	if err == nil || !strings.Contains(err.Error(), "line 4: livenessProbe.exec is written with template actions") {
		t.Errorf("err %v, want the line with template actions", err)
	}
}

// A handler the template does not write (built by toYaml or a helper) is
// not edited, and two identical literal blocks are ambiguous.
func TestReplaceLiteralHandlerRefusesOtherBlocks(t *testing.T) {
	src := "        livenessProbe:\n{{ toYaml .Values.probe | indent 10 }}\n"
	if _, err := ReplaceLiteralHandler([]byte(src), "livenessProbe", "exec", execHandler, "tcpSocket", map[string]any{"port": 5432}); err == nil || !strings.Contains(err.Error(), "not written literally") {
		t.Errorf("toYaml block: err %v", err)
	}
	twice := probeTemplate + strings.Replace(probeTemplate, "name: database", "name: other", 1)
	if _, err := ReplaceLiteralHandler([]byte(twice), "livenessProbe", "exec", execHandler, "tcpSocket", map[string]any{"port": 5432}); err == nil || !strings.Contains(err.Error(), "written 2 times") {
		t.Errorf("two blocks: err %v", err)
	}
}
