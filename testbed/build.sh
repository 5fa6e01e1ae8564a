#!/usr/bin/env bash
# Build (or reuse) the test control-plane binaries: kube-apiserver, kube-scheduler, kube-controller-manager,
# kubectl and etcd, all from the pinned wrapper module in testbed/go (see testbed/gen-gomod.sh).
#
# Output: ${TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omerender-testbed}/k8s-<version>/
# The last stdout line is `export KUBEBUILDER_ASSETS=<dir>` (envtest's convention); progress goes to stderr.
# Exits non-zero on any build failure. Binaries live outside the repo and are never committed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
moddir="$here/go"

# Read the pin straight from go.mod so a warm cache hit needs no Go toolchain.
k8s_version="$(awk '($1=="require" && $2=="k8s.io/kubernetes"){print $3; exit} ($1=="k8s.io/kubernetes"){print $2; exit}' "$moddir/go.mod")"
if [ -z "$k8s_version" ]; then
  echo "build.sh: cannot read the k8s.io/kubernetes version from $moddir/go.mod" >&2
  exit 1
fi
cache_root="${TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omerender-testbed}"
out="$cache_root/k8s-$k8s_version"
bins=(kube-apiserver kube-scheduler kube-controller-manager kubectl etcd)

# The stamp ties a cache entry to the exact pins and build flags, so an edited go.mod rebuilds even
# though the version key is unchanged.
stamp_input="$(cat "$moddir/go.mod" "$moddir/go.sum"; echo "flags:v1")"
stamp="$(printf '%s' "$stamp_input" | sha256sum | cut -d' ' -f1)"

answers_version() {
  local bin="$1"
  case "$bin" in
    kubectl) "$out/$bin" version --client >/dev/null 2>&1 ;;
    *) "$out/$bin" --version >/dev/null 2>&1 ;;
  esac
}

cache_ok() {
  [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ] || return 1
  local b
  for b in "${bins[@]}"; do
    [ -x "$out/$b" ] || return 1
    answers_version "$b" || return 1
  done
}

if cache_ok; then
  echo "build.sh: reusing $out" >&2
  echo "export KUBEBUILDER_ASSETS=$out"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "build.sh: the Go toolchain is not on PATH (need go >= $(awk '$1=="go"{print $2}' "$moddir/go.mod"))" >&2
  exit 1
fi

minor="${k8s_version#v1.}"; minor="${minor%%.*}"
build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
ldflags="-s -w"
# Same keys as kubernetes/kubernetes hack/lib/version.sh, for both version packages, so /version and
# `kubectl version` report the real release instead of v0.0.0-master.
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
done

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
mkdir -p "$cache_root"
tmp="$(mktemp -d "$cache_root/.build-$k8s_version.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

echo "build.sh: building k8s $k8s_version binaries into $out (cold builds take a while)" >&2
(
  cd "$moddir"
  go build -trimpath -ldflags "$ldflags" -o "$tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kubectl
  # The etcd server package is named v3, so name its binary explicitly.
  go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
) >&2

mkdir -p "$out"
for b in "${bins[@]}"; do
  mv -f "$tmp/$b" "$out/$b"
done
echo "$stamp" >"$out/.stamp"

for b in "${bins[@]}"; do
  if ! answers_version "$b"; then
    echo "build.sh: $out/$b does not answer --version" >&2
    exit 1
  fi
done
"$out/kube-apiserver" --version >&2
"$out/etcd" --version | head -1 >&2
echo "export KUBEBUILDER_ASSETS=$out"
