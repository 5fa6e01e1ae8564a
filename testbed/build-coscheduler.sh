#!/usr/bin/env bash
# Build (or reuse) the gang scheduler for the test control plane: kubernetes-sigs scheduler-plugins'
# scheduler, whose Coscheduling plugin binds a PodGroup's pods all together or not at all. Pinned by the
# wrapper module in testbed/coscheduler (see testbed/gen-coscheduler-gomod.sh).
#
# Output: ${TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omerender-testbed}/scheduler-plugins-<version>/
#   scheduler   the binary
#   crd.yaml    the PodGroup CRD exactly as the release ships it (manifests/coscheduling/crd.yaml)
# The last stdout line is `export COSCHEDULER_ASSETS=<dir>`; progress goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
moddir="$here/coscheduler"
version="$(awk '($1=="require" && $2=="sigs.k8s.io/scheduler-plugins"){print $3; exit} ($1=="sigs.k8s.io/scheduler-plugins"){print $2; exit}' "$moddir/go.mod")"
if [ -z "$version" ]; then
  echo "build-coscheduler.sh: cannot read the scheduler-plugins version from $moddir/go.mod" >&2
  exit 1
fi
cache_root="${TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omerender-testbed}"
out="$cache_root/scheduler-plugins-$version"
stamp="$( (cat "$moddir/go.mod" "$moddir/go.sum"; echo "flags:v1") | sha256sum | cut -d' ' -f1)"

cache_ok() {
  [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ] && [ -s "$out/crd.yaml" ] &&
    [ -x "$out/scheduler" ] && "$out/scheduler" --version >/dev/null 2>&1
}

if cache_ok; then
  echo "build-coscheduler.sh: reusing $out" >&2
  echo "export COSCHEDULER_ASSETS=$out"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "build-coscheduler.sh: the Go toolchain is not on PATH" >&2
  exit 1
fi

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
mkdir -p "$cache_root"
tmp="$(mktemp -d "$cache_root/.build-plugins-$version.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

echo "build-coscheduler.sh: building scheduler-plugins $version into $out (cold builds take a while)" >&2
(
  cd "$moddir"
  go build -trimpath -ldflags "-s -w" -o "$tmp/scheduler" sigs.k8s.io/scheduler-plugins/cmd/scheduler
  # The CRD comes from the same module version the binary is built from, never a hand-written copy.
  src="$(go list -m -f '{{.Dir}}' sigs.k8s.io/scheduler-plugins)"
  cp "$src/manifests/coscheduling/crd.yaml" "$tmp/crd.yaml"
  chmod u+w "$tmp/crd.yaml"
) >&2

mkdir -p "$out"
mv -f "$tmp/scheduler" "$out/scheduler"
mv -f "$tmp/crd.yaml" "$out/crd.yaml"
echo "$stamp" >"$out/.stamp"
if ! "$out/scheduler" --version >/dev/null 2>&1; then
  echo "build-coscheduler.sh: $out/scheduler does not answer --version" >&2
  exit 1
fi
echo "export COSCHEDULER_ASSETS=$out"
