#!/usr/bin/env bash
# Regenerate testbed/go/go.mod + go.sum: a wrapper module that builds the Kubernetes control-plane
# binaries (and the etcd server Kubernetes itself selects) from the Go module proxy.
#
# Why a wrapper: k8s.io/kubernetes requires its staging modules at v0.0.0 and maps them to ./staging with
# replace directives, which `go install pkg@version` refuses. The replace list is derived from the release's
# own go.mod (never typed by hand) so it follows staging splits between minors.
#
# Usage: bash testbed/gen-gomod.sh [K8S_VERSION]   (default v1.36.3)
set -euo pipefail

K8S_VERSION="${1:-v1.36.3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$here/go"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod

minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
patch="${K8S_VERSION##*.}"
staging_version="v0.${minor}.${patch}"

upstream_gomod="$(go mod download -json "k8s.io/kubernetes@${K8S_VERSION}" |
  python3 -c 'import json,sys; d=json.load(sys.stdin); e=d.get("Error"); sys.exit(e) if e else print(d["GoMod"])')"

go_line="$(awk '$1=="go"{print $2; exit}' "$upstream_gomod")"
godebug_line="$(awk '$1=="godebug"{print $2; exit}' "$upstream_gomod")"
# Staging modules are exactly the k8s.io/* requirements pinned at the unpublished v0.0.0.
mapfile -t staging < <(awk '$2=="v0.0.0" && $1 ~ /^k8s\.io\// {print $1}' "$upstream_gomod" | sort -u)
if [ "${#staging[@]}" -eq 0 ]; then
  echo "gen-gomod: no k8s.io/* v0.0.0 requirements found in $upstream_gomod" >&2
  exit 1
fi

mkdir -p "$dir"
cd "$dir"
rm -f go.mod go.sum
go mod init testbed.local/kubebins >/dev/null 2>&1
go mod edit -go="$go_line"
if [ -n "$godebug_line" ]; then
  # Keep upstream GODEBUG defaults in the binaries.
  go mod edit -godebug="$godebug_line"
fi
for m in "${staging[@]}"; do
  go mod edit -replace="$m=$m@$staging_version"
done
go mod edit -require="k8s.io/kubernetes@${K8S_VERSION}"

for cmd in kube-apiserver kube-scheduler kube-controller-manager kubectl; do
  go get -tool "k8s.io/kubernetes/cmd/${cmd}@${K8S_VERSION}"
done
# The etcd server at the version Kubernetes already selects, so its client and server agree.
etcd_version="$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"
go get -tool "go.etcd.io/etcd/server/v3@${etcd_version}"
go mod tidy

echo "gen-gomod: k8s ${K8S_VERSION}, ${#staging[@]} staging replaces at ${staging_version}, etcd ${etcd_version}" >&2
