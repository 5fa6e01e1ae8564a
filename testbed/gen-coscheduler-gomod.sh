#!/usr/bin/env bash
# Regenerate testbed/coscheduler/go.mod + go.sum: a wrapper module that builds the kubernetes-sigs
# scheduler-plugins scheduler (Coscheduling, the gang scheduler OME's PodGroups are for) from the Go
# module proxy.
#
# Why a wrapper and why v1.34.4: scheduler-plugins v0.34.7 (the release the proxy serves) pins
# k8s.io/kubernetes v1.34.7, whose staging modules the proxy refuses. Its replace block is taken from the
# release's own go.mod (never typed by hand) with every v0.34.7 / v1.34.7 moved to v0.34.4 / v1.34.4, plus
# the k8s.io/externaljwt line kubernetes v1.34.4 needs.
#
# Usage: bash testbed/gen-coscheduler-gomod.sh [PLUGINS_VERSION [K8S_VERSION]]
set -euo pipefail

PLUGINS_VERSION="${1:-v0.34.7}"
K8S_VERSION="${2:-v1.34.4}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$here/coscheduler"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod

minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
patch="${K8S_VERSION##*.}"
staging_version="v0.${minor}.${patch}"

upstream_gomod="$(go mod download -json "sigs.k8s.io/scheduler-plugins@${PLUGINS_VERSION}" |
  python3 -c 'import json,sys; d=json.load(sys.stdin); e=d.get("Error"); sys.exit(e) if e else print(d["GoMod"])')"
up_kube="$(awk '$1=="k8s.io/kubernetes" && $2 ~ /^v1\./ {print $2; exit}' "$upstream_gomod")"
up_staging="v0.${up_kube#v1.}"

mkdir -p "$dir"
cd "$dir"
rm -f go.mod go.sum
go mod init testbed.local/coscheduler >/dev/null 2>&1
go mod edit -go="$(awk '$1=="go"{print $2; exit}' "$upstream_gomod")"
# Every `old => new version` replace of the release, re-pinned from its k8s version to ours.
python3 - "$upstream_gomod" "$up_kube" "$K8S_VERSION" "$up_staging" "$staging_version" <<'PY' | while read -r line; do go mod edit -replace="$line"; done
import re, sys
path, up_kube, kube, up_staging, staging = sys.argv[1:]
for m in re.finditer(r"^\s*(?:replace\s+)?(\S+)\s+=>\s+(\S+)\s+(v\S+)\s*$", open(path).read(), re.M):
    mod, target, version = m.groups()
    version = {up_kube: kube, up_staging: staging}.get(version, version)
    print(f"{mod}={target}@{version}")
PY
go mod edit -replace="k8s.io/externaljwt=k8s.io/externaljwt@${staging_version}"
go mod edit -require="sigs.k8s.io/scheduler-plugins@${PLUGINS_VERSION}"
go get -tool "sigs.k8s.io/scheduler-plugins/cmd/scheduler@${PLUGINS_VERSION}"
go mod tidy

echo "gen-coscheduler-gomod: scheduler-plugins ${PLUGINS_VERSION} against k8s ${K8S_VERSION} (staging ${staging_version})" >&2
