#!/usr/bin/env bash
# Build (or reuse) helm from the Go module proxy, cached by version outside the repo.
#
# Output: ${TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omerender-testbed}/helm-<version>/helm
# The last stdout line is `export HELM=<path>`; progress goes to stderr.
set -euo pipefail

version="${HELM_VERSION:-v3.22.0}"
cache_root="${TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omerender-testbed}"
out="$cache_root/helm-$version"

if [ -x "$out/helm" ] && "$out/helm" version --short 2>/dev/null | grep -q "^${version%.*}"; then
  echo "helm.sh: reusing $out/helm" >&2
  echo "export HELM=$out/helm"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "helm.sh: the Go toolchain is not on PATH" >&2
  exit 1
fi
mkdir -p "$cache_root"
tmp="$(mktemp -d "$cache_root/.helm-$version.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "helm.sh: building helm $version into $out" >&2
# The module path carries the major version (helm.sh/helm/v3).
major="${version%%.*}"
GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOBIN="$tmp" \
  go install -ldflags "-s -w -X helm.sh/helm/$major/internal/version.version=$version" \
  "helm.sh/helm/$major/cmd/helm@$version"
"$tmp/helm" version --short >&2
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "export HELM=$out/helm"
