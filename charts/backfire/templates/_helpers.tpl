{{- define "backfire.fullname" -}}
{{- printf "%s-backfire" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "backfire.labels" -}}
app.kubernetes.io/name: backfire
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "backfire.selector" -}}
app.kubernetes.io/name: backfire
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: webhook
{{- end -}}

{{- define "backfire.tlsSecret" -}}
{{- default (printf "%s-tls" (include "backfire.fullname" .)) .Values.tls.secretName -}}
{{- end -}}
