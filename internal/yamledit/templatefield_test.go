package yamledit

import (
	"strings"
	"testing"
)

// Two containers, each with a literal liveness probe: only the named
// container's is edited.
const scalarTemplate = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "shop.fullname" . }}
spec:
  template:
    spec:
      containers:
      - name: api
        image: "{{ .Values.image }}"
        livenessProbe:
          httpGet:
            path: /healthz
            port: http
          periodSeconds: {{ .Values.period }}
          timeoutSeconds: 1   # the kubelet's default
        readinessProbe:
          httpGet:
            path: /ready
            port: http
          failureThreshold: 1
      - name: sidecar
        image: proxy:1.0
        livenessProbe:
          tcpSocket:
            port: 15000
          timeoutSeconds: 1
{{- if .Values.resources }}
        resources:
{{ toYaml .Values.resources | indent 10 }}
{{- end }}
`

func field(container, probe, key string) ProbeField {
	return ProbeField{List: "containers", Container: container, Probe: probe, Key: key}
}

func TestSetLiteralProbeFieldReplacesTheValue(t *testing.T) {
	got, err := SetLiteralProbeField([]byte(scalarTemplate), field("api", "livenessProbe", "timeoutSeconds"), 1.0, true, 3.0)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(scalarTemplate, "timeoutSeconds: 1   # the kubelet's default", "timeoutSeconds: 3   # the kubelet's default", 1)
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	again, err := SetLiteralProbeField(got, field("api", "livenessProbe", "timeoutSeconds"), 1.0, true, 3.0)
	if err != nil || string(again) != string(got) {
		t.Errorf("second run: err %v, changed %v", err, string(again) != string(got))
	}
	// The sidecar's probe is its own.
	got, err = SetLiteralProbeField([]byte(scalarTemplate), field("sidecar", "livenessProbe", "timeoutSeconds"), 1.0, true, 2.0)
	if err != nil {
		t.Fatal(err)
	}
	want = strings.Replace(scalarTemplate, "            port: 15000\n          timeoutSeconds: 1\n", "            port: 15000\n          timeoutSeconds: 2\n", 1)
	if string(got) != want {
		t.Errorf("sidecar: got\n%s\nwant\n%s", got, want)
	}
}

func TestSetLiteralProbeFieldAddsASibling(t *testing.T) {
	got, err := SetLiteralProbeField([]byte(scalarTemplate), field("api", "readinessProbe", "successThreshold"), nil, false, 1.0)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(scalarTemplate, "          failureThreshold: 1\n", "          failureThreshold: 1\n          successThreshold: 1\n", 1)
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	again, err := SetLiteralProbeField(got, field("api", "readinessProbe", "successThreshold"), nil, false, 1.0)
	if err != nil || string(again) != string(got) {
		t.Errorf("second run: err %v, changed %v", err, string(again) != string(got))
	}
	// A block whose values are template actions still has literal keys:
	// the new key goes after the last one, here the sidecar's, and the
	// control line that follows the block is not part of it.
	got, err = SetLiteralProbeField([]byte(scalarTemplate), field("sidecar", "livenessProbe", "failureThreshold"), nil, false, 6.0)
	if err != nil {
		t.Fatal(err)
	}
	want = strings.Replace(scalarTemplate, "          timeoutSeconds: 1\n{{- if", "          timeoutSeconds: 1\n          failureThreshold: 6\n{{- if", 1)
	if string(got) != want {
		t.Errorf("sidecar: got\n%s\nwant\n%s", got, want)
	}
}

// Line breaks are kept: CRLF, and a block that ends the file without one.
func TestSetLiteralProbeFieldLineEnds(t *testing.T) {
	crlf := strings.ReplaceAll(scalarTemplate, "\n", "\r\n")
	got, err := SetLiteralProbeField([]byte(crlf), field("api", "readinessProbe", "successThreshold"), nil, false, 1.0)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(crlf, "          failureThreshold: 1\r\n", "          failureThreshold: 1\r\n          successThreshold: 1\r\n", 1)
	if string(got) != want {
		t.Errorf("CRLF: got %q", got)
	}
	short := "      containers:\n      - name: api\n        livenessProbe:\n          tcpSocket: {port: 80}\n          timeoutSeconds: 1"
	got, err = SetLiteralProbeField([]byte(short), field("api", "livenessProbe", "failureThreshold"), nil, false, 6.0)
	if err != nil {
		t.Fatal(err)
	}
	if want := short + "\n          failureThreshold: 6"; string(got) != want {
		t.Errorf("no final line break: got %q", got)
	}
}

// A string keeps its quotes; a value set with a template action, a key
// the block writes twice, a probe written twice, a block a helper builds
// and a line that did not render the value are each refused with the
// reason and the line.
func TestSetLiteralProbeFieldQuotingAndRefusals(t *testing.T) {
	quoted := strings.Replace(scalarTemplate, "            path: /healthz\n", "            path: /healthz\n          note: \"it's slow\" # why\n", 1)
	got, err := SetLiteralProbeField([]byte(quoted), field("api", "livenessProbe", "note"), "it's slow", true, "a \"fast\" one")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(quoted, `note: "it's slow" # why`, `note: "a \"fast\" one" # why`, 1); string(got) != want {
		t.Errorf("double quotes: got\n%s", got)
	}
	single := strings.Replace(quoted, `note: "it's slow"`, `note: 'it''s slow'`, 1)
	got, err = SetLiteralProbeField([]byte(single), field("api", "livenessProbe", "note"), "it's slow", true, "isn't fast")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(single, `note: 'it''s slow'`, `note: 'isn''t fast'`, 1); string(got) != want {
		t.Errorf("single quotes: got\n%s", got)
	}

	refused := []struct {
		name, src string
		f         ProbeField
		old       any
		present   bool
		val       any
		want      string
	}{
		{"action on the line", scalarTemplate, field("api", "livenessProbe", "periodSeconds"), 10.0, true, 30.0,
			"line 15: containers[api].livenessProbe.periodSeconds is written with a template action"},
		{"key twice", strings.Replace(scalarTemplate, "          timeoutSeconds: 1   #", "{{- if .Values.slow }}\n          timeoutSeconds: 5\n{{- else }}\n          timeoutSeconds: 1\n{{- end }}\n          #", 1),
			field("api", "livenessProbe", "timeoutSeconds"), 1.0, true, 3.0, "lines 17 and 19: containers[api].livenessProbe.timeoutSeconds is written 2 times in its block"},
		{"probe twice", strings.Replace(scalarTemplate, "        readinessProbe:", "{{- if .Values.strict }}\n        livenessProbe:\n          tcpSocket:\n            port: http\n          timeoutSeconds: 1\n{{- end }}\n        readinessProbe:", 1),
			field("api", "livenessProbe", "timeoutSeconds"), 1.0, true, 3.0, "containers[api].livenessProbe is written 2 times in the template (lines 11 and 18)"},
		{"toYaml, present", "      containers:\n      - name: api\n        livenessProbe:\n{{ toYaml .Values.probe | indent 10 }}\n        image: x\n",
			field("api", "livenessProbe", "timeoutSeconds"), 1.0, true, 3.0, "line 4: a template action builds part of containers[api].livenessProbe, and timeoutSeconds is not written in it"},
		{"toYaml, absent", "      containers:\n      - name: api\n        livenessProbe:\n          timeoutSeconds: 1\n{{- with .Values.extra }}\n{{ toYaml . | indent 10 }}\n{{- end }}\n        image: x\n",
			field("api", "livenessProbe", "failureThreshold"), nil, false, 6.0, "line 6: a template action builds part of containers[api].livenessProbe, which could print failureThreshold too: not added"},
		{"helper builds the probe", "      containers:\n      - name: api\n{{ include \"probes\" . | indent 8 }}\n",
			field("api", "livenessProbe", "timeoutSeconds"), 1.0, true, 3.0, "containers[api].livenessProbe is not written as a plain block in the template"},
		{"another container", scalarTemplate, field("worker", "livenessProbe", "timeoutSeconds"), 1.0, true, 3.0, "is not written as a plain block"},
		{"another value", scalarTemplate, field("api", "livenessProbe", "timeoutSeconds"), 2.0, true, 3.0,
			"line 16: containers[api].livenessProbe.timeoutSeconds is 1 in the template and 2 in the rendered object: the line did not render it"},
		{"not rendered", scalarTemplate, field("api", "livenessProbe", "timeoutSeconds"), nil, false, 3.0, "absent from the rendered object"},
		{"present, no line", scalarTemplate, field("api", "livenessProbe", "failureThreshold"), 3.0, true, 6.0, "line 11: containers[api].livenessProbe has no failureThreshold line"},
		{"not a scalar", scalarTemplate, field("api", "livenessProbe", "httpGet"), nil, true, 3.0, "not a scalar on its line"},
		{"a map", scalarTemplate, field("api", "livenessProbe", "timeoutSeconds"), 1.0, true, map[string]any{"a": 1}, "only a scalar"},
	}
	for _, c := range refused {
		out, err := SetLiteralProbeField([]byte(c.src), c.f, c.old, c.present, c.val)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
		if out != nil {
			t.Errorf("%s: a refused edit returns contents", c.name)
		}
	}
}

// Any template text: no panic, and an edit made is made once (the same
// call on its result changes nothing).
func FuzzSetLiteralProbeField(f *testing.F) {
	f.Add(scalarTemplate, "api", "livenessProbe", "timeoutSeconds", true)
	f.Add(scalarTemplate, "api", "readinessProbe", "successThreshold", false)
	f.Add(strings.ReplaceAll(scalarTemplate, "\n", "\r\n"), "sidecar", "livenessProbe", "failureThreshold", false)
	f.Add("      containers:\n      - name: api\n        livenessProbe:\n\t  timeoutSeconds: 1\n", "api", "livenessProbe", "timeoutSeconds", true)
	f.Add("- name: x\n  livenessProbe:\n    timeoutSeconds: '1'\n", "x", "livenessProbe", "timeoutSeconds", true)
	f.Fuzz(func(t *testing.T, src, container, probe, key string, present bool) {
		fld := ProbeField{List: "containers", Container: container, Probe: probe, Key: key}
		var old any
		if present {
			old = 1.0
		}
		out, err := SetLiteralProbeField([]byte(src), fld, old, present, 3.0)
		if err != nil {
			return
		}
		again, err := SetLiteralProbeField(out, fld, old, present, 3.0)
		if err != nil || string(again) != string(out) {
			t.Errorf("second run: err %v, changed %v\n%q\n%q", err, string(again) != string(out), out, again)
		}
	})
}

// A control action that only guards a line inside the handler (the
// scheme of prometheus-community's redis exporter, charts/
// prometheus-redis-exporter/templates/deployment.yaml) cannot print a key
// of the probe: the keys are added. An action around a key of the probe
// still refuses.
func TestSetLiteralProbeFieldNestedAction(t *testing.T) {
	const exporter = `      containers:
      - name: exporter
        image: x
        livenessProbe:
          httpGet:
            path: /
            port: exporter-port
            {{- if .Values.tls }}
            scheme: HTTPS
            {{- end }}
        readinessProbe:
          httpGet:
            path: /
`
	f := ProbeField{List: "containers", Container: "exporter", Probe: "livenessProbe", Key: "timeoutSeconds"}
	out, err := SetLiteralProbeField([]byte(exporter), f, nil, false, 3.0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "            {{- end }}\n          timeoutSeconds: 3\n        readinessProbe:") {
		t.Errorf("not added after the block:\n%s", out)
	}
	guarded := strings.Replace(exporter, "          httpGet:\n            path: /\n            port: exporter-port\n", "          {{- if .Values.slow }}\n          failureThreshold: 5\n          {{- end }}\n          httpGet:\n            path: /\n            port: exporter-port\n", 1)
	if _, err := SetLiteralProbeField([]byte(guarded), f, nil, false, 3.0); err == nil || !strings.Contains(err.Error(), "template action") {
		t.Errorf("a probe with a key inside an action: err %v", err)
	}
}
