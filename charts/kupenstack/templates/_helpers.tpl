{{/* The release's full name: the release name, prefixed to the chart's name unless it already holds it. */}}
{{- define "kupenstack.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kupenstack.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kupenstack.labels" -}}
{{ include "kupenstack.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "kupenstack.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "kupenstack.fullname" .) -}}
{{- else -}}
{{- required "serviceAccount.name is needed when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
kupenstack.durationNanos: a period value in nanoseconds, as the operator's time.ParseDuration
reads it. The schema has held the value to the CRDs' duration syntax (0, or one to four parts of
at most five integer and nine fraction digits and a unit), so the sum stays far within int64.
The chart adds the parts up because a pattern cannot: 500ms500ms is 1s, as for the operator.
*/}}
{{- define "kupenstack.durationNanos" -}}
{{- $units := dict "ns" 1 "us" 1000 "µs" 1000 "μs" 1000 "ms" 1000000 "s" 1000000000 "m" 60000000000 "h" 3600000000000 -}}
{{- $total := 0 -}}
{{- range $part := regexFindAll "[0-9.]+[^0-9.]+" (toString .) -1 -}}
{{- $number := regexFind "^[0-9.]+" $part -}}
{{- $unit := get $units (trimPrefix $number $part) -}}
{{- $whole := regexFind "^[0-9]*" $number -}}
{{- $fraction := trimPrefix "." (trimPrefix $whole $number) -}}
{{- $total = add $total (mul (atoi $whole) $unit) -}}
{{- if $fraction -}}
{{- /* As Go does: the fraction's digits times unit/10^digits, truncated to whole nanoseconds. */ -}}
{{- $total = add $total (int64 (mulf (float64 $fraction) (divf (float64 $unit) (float64 (printf "1e%d" (len $fraction)))))) -}}
{{- end -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/*
kupenstack.checkPeriod: fails the install, as the operator would fail at start, for a period
below 1s, where 0 means off only if zeroIsOff. Takes (list valueName value zeroIsOff).
*/}}
{{- define "kupenstack.checkPeriod" -}}
{{- $nanos := include "kupenstack.durationNanos" (index . 1) | atoi -}}
{{- if and (index . 2) (eq $nanos 0) -}}
{{- else if lt $nanos 1000000000 -}}
{{- fail (printf "%s %q: must be %sat least 1s, as the operator checks at start" (index . 0) (toString (index . 1)) (ternary "0 (off) or " "" (index . 2))) -}}
{{- end -}}
{{- end -}}
