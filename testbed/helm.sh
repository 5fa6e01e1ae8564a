#!/usr/bin/env bash
# Build (or reuse) helm from the Go module proxy, cached by version outside the repo.
#
# Its default Kubernetes version (what `helm template` and `helm lint` assume without --kube-version;
# helm's own default is v1.20) is set at link time to the test control plane's minor, read from the
# k8s.io/kubernetes pin in testbed/go/go.mod, as helm's Makefile does from its client-go version.
#
# Output: ${TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omerender-testbed}/helm-<version>-k8s<major.minor>/helm
# The last stdout line is `export HELM=<path>`; progress goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="${HELM_VERSION:-v3.21.4}"
k8s_version="$(awk '($1=="require" && $2=="k8s.io/kubernetes"){print $3; exit} ($1=="k8s.io/kubernetes"){print $2; exit}' "$here/go/go.mod")"
k8s_minor="${k8s_version#v1.}"; k8s_minor="${k8s_minor%%.*}"
if [ -z "$k8s_minor" ] || [ "$k8s_minor" = "$k8s_version" ]; then
  echo "helm.sh: cannot read the k8s.io/kubernetes version from testbed/go/go.mod" >&2
  exit 1
fi
cache_root="${TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omerender-testbed}"
out="$cache_root/helm-$version-k8s1.$k8s_minor"

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
echo "helm.sh: building helm $version (default Kubernetes v1.$k8s_minor) into $out" >&2
# The module path carries the major version (helm.sh/helm/v3).
major="${version%%.*}"
ldflags="-s -w -X helm.sh/helm/$major/internal/version.version=$version"
for pkg in pkg/chartutil pkg/lint/rules; do
  ldflags+=" -X helm.sh/helm/$major/$pkg.k8sVersionMajor=1 -X helm.sh/helm/$major/$pkg.k8sVersionMinor=$k8s_minor"
done
GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOBIN="$tmp" \
  go install -ldflags "$ldflags" "helm.sh/helm/$major/cmd/helm@$version"
"$tmp/helm" version --short >&2
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "export HELM=$out/helm"
