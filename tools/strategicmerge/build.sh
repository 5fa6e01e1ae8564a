#!/usr/bin/env bash
# Build (or reuse) the strategic-merge oracle (tools/strategicmerge) from the module proxy.
#
# Output: ${STRATEGICMERGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omerender-strategicmerge}/<stamp>/strategicmerge
# The stamp hashes go.mod, go.sum and the Go sources, so any edit rebuilds. The last stdout line is
# `export STRATEGICMERGE_BIN=<path>`; progress goes to stderr. Exits non-zero on any failure: CI
# (scripts/test.sh) and the differential test fail, never skip, without the oracle.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
stamp="$(cd "$here" && cat go.mod go.sum $(ls ./*.go | sort) | sha256sum | cut -c1-16)"
cache_root="${STRATEGICMERGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omerender-strategicmerge}"
out="$cache_root/$stamp"
bin="$out/strategicmerge"

answers() {
  [ "$(printf '{"id":0,"op":"canon:container","a":{"name":"x"}}\n' | "$bin" 2>/dev/null)" = \
    '{"id":0,"result":{"name":"x","resources":{}}}' ]
}

if [ -x "$bin" ] && answers; then
  echo "strategicmerge/build.sh: reusing $bin" >&2
  echo "export STRATEGICMERGE_BIN=$bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "strategicmerge/build.sh: the Go toolchain is not on PATH (need go >= $(awk '$1=="go"{print $2}' "$here/go.mod"))" >&2
  exit 1
fi

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
mkdir -p "$cache_root"
tmp="$(mktemp -d "$cache_root/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "strategicmerge/build.sh: building into $out" >&2
(cd "$here" && go build -trimpath -ldflags "-s -w" -o "$tmp/strategicmerge" .) >&2
mkdir -p "$out"
mv -f "$tmp/strategicmerge" "$bin"
if ! answers; then
  echo "strategicmerge/build.sh: $bin does not answer a canonical request" >&2
  exit 1
fi
echo "export STRATEGICMERGE_BIN=$bin"
