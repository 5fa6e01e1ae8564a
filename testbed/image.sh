#!/usr/bin/env bash
# Build (or reuse) the reconciler image without Docker or a registry:
#   1. a Debian base image from packages (mmdebstrap), cached by its inputs;
#   2. the project's wheels built on the host (the build has no trusted route to a package index);
#   3. `buildah bud --isolation chroot` of the repository's Dockerfile with --build-arg BASE=<that base>.
#
# Output: the last stdout line is `export OMERECONCILE_IMAGE=<tag>`; progress goes to stderr.
# The base tarball lives in ${TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omerender-testbed}/image-base-<key>/,
# images in the host's container storage (podman/buildah share it). Needs root (or a subuid range).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache_root="${TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omerender-testbed}"
suite=bookworm   # Python 3.11, the minor the host builds the native wheels for
packages=python3,python3-venv,ca-certificates

for tool in mmdebstrap buildah podman; do
  command -v "$tool" >/dev/null || { echo "image.sh: $tool is not installed (apt-get install $tool)" >&2; exit 1; }
done
host_minor="$(python3 -c 'import sys;print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
if [ "$host_minor" != "3.11" ]; then
  echo "image.sh: host Python is $host_minor; the $suite base has 3.11 and native wheels must match" >&2
  exit 1
fi

sha() { sha256sum | cut -c1-12; }

# -- 1. base image -------------------------------------------------------------------------------------
base_key="$(printf '%s|%s|%s|v1' "$suite" "$packages" "minbase" | sha)"
base_dir="$cache_root/image-base-$base_key"
base_tag="localhost/omerender-base:$suite-$base_key"
if [ ! -s "$base_dir/base.tar" ]; then
  echo "image.sh: building the $suite base ($packages) with mmdebstrap" >&2
  mkdir -p "$cache_root"
  tmp="$(mktemp -d "$cache_root/.image-base.XXXXXX")"
  # Apt lists and docs are dropped: the image needs neither and they are most of a minbase's weight.
  mmdebstrap --variant=minbase --include="$packages" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    "$suite" "$tmp/base.tar" >&2
  rm -rf "$base_dir"
  mv "$tmp" "$base_dir"
fi
if ! podman image exists "$base_tag"; then
  podman import "$base_dir/base.tar" "$base_tag" >&2
fi

# -- 2. wheels -------------------------------------------------------------------------------------------
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
cp "$repo/Dockerfile" "$ctx/"
echo "image.sh: building the project's wheels on the host" >&2
python3 -m pip wheel --quiet --disable-pip-version-check --only-binary=:all: --no-binary=omerender \
  --wheel-dir "$ctx/wheels" "$repo[reconcile]" >&2

# -- 3. image --------------------------------------------------------------------------------------------
# Tagged by everything that goes in, so an unchanged tree reuses the image.
key="$( (echo "$base_key"; cat "$ctx/Dockerfile"; cd "$ctx/wheels" && ls | sort && cat $(ls | grep -v '^omerender-')) | sha)"
src_key="$( (cd "$repo" && git ls-files -z omerender omereconcile pyproject.toml | sort -z | xargs -0 cat) | sha)"
tag="localhost/omereconcile:$key-$src_key"
if podman image exists "$tag"; then
  echo "image.sh: reusing $tag" >&2
else
  echo "image.sh: buildah bud -> $tag" >&2
  start=$(date +%s)
  buildah bud --isolation chroot --layers=false --build-arg "BASE=$base_tag" -t "$tag" "$ctx" >&2
  echo "image.sh: built in $(( $(date +%s) - start ))s" >&2
fi
podman image inspect --format 'image.sh: {{.Size}} bytes' "$tag" >&2
echo "export OMERECONCILE_IMAGE=$tag"
