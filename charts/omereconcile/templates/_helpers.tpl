{{/* The release's name for its objects: the release name when it already says omereconcile. */}}
{{- define "omereconcile.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "omereconcile.selectorLabels" -}}
app.kubernetes.io/name: omereconcile
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "omereconcile.labels" -}}
{{ include "omereconcile.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "omereconcile.certSecret" -}}
{{- $cert := .Values.webhook.certificate -}}
{{- if and (eq $cert.mode "secret") (not $cert.secretName) -}}
{{- fail "webhook.certificate.secretName: with mode secret, name your kubernetes.io/tls Secret in the release namespace" -}}
{{- end -}}
{{- /* selfManaged: a name of its own (Gatekeeper's), so an upgrade from a chart that kept a
kubernetes.io/tls Secret under the other name never has to change a Secret's immutable type. */ -}}
{{- $suffix := ternary "webhook-server-cert" "webhook-cert" (eq $cert.mode "selfManaged") -}}
{{- $cert.secretName | default (printf "%s-%s" (include "omereconcile.fullname" .) $suffix) -}}
{{- end -}}

{{- define "omereconcile.webhookService" -}}
{{- printf "%s-webhook" (include "omereconcile.fullname" .) -}}
{{- end -}}

{{- define "omereconcile.webhookConfig" -}}
{{- printf "%s-inferencereplica" (include "omereconcile.fullname" .) -}}
{{- end -}}

{{/* repository:tag, or repository@digest when image.digest is set. */}}
{{- define "omereconcile.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/*
The rules of one ClusterRole of deploy/base/rbac.yaml (files/rbac.yaml is a copy, checked equal by
tests/unit/test_chart.py), so the chart and
`kubectl apply -k deploy/` grant exactly the same. Call with (dict "root" $ "name" "omereconcile").
*/}}
{{- define "omereconcile.deployRules" -}}
{{- $want := .name -}}
{{- $found := false -}}
{{- range (.root.Files.Get "files/rbac.yaml" | splitList "\n---\n") -}}
{{- $doc := fromYaml . -}}
{{- if and (eq (get $doc "kind") "ClusterRole") (eq (get (get $doc "metadata" | default dict) "name") $want) -}}
{{- $found = true -}}
{{ toYaml (get $doc "rules") }}
{{- end -}}
{{- end -}}
{{- if not $found -}}
{{- fail (printf "files/rbac.yaml (deploy/base/rbac.yaml) has no ClusterRole %q" $want) -}}
{{- end -}}
{{- end -}}

{{/*
"true" when the pods run sharded (issue 31): sharding.enabled and more than one pod. One pod runs behind
the leader Lease instead (a standby-less install: the same as today).
*/}}
{{- define "omereconcile.sharded" -}}
{{- if and .Values.sharding.enabled (gt (int .Values.replicaCount) 1) -}}true{{- end -}}
{{- end -}}
