#!/usr/bin/env bash
# Cut a release (docs/releasing.md): set VERSION everywhere a version is written, move the CHANGELOG's
# Unreleased entries under VERSION, build the sdist and the wheel, check them with `twine check --strict`,
# then commit "release VERSION" and tag vVERSION. Nothing is pushed or uploaded: that stays a person's act.
# Usage: bash scripts/release.sh VERSION [--dist DIR]    (the built files go to DIR, default dist/VERSION)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"

fail() { echo "release: $*" >&2; exit 1; }

[[ $# -ge 1 ]] || fail "usage: bash scripts/release.sh VERSION [--dist DIR] (VERSION as 1.2.3, no v)"
version="$1"; shift
dist="dist/$version"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dist) dist="$2"; shift 2 ;;
    *) fail "unknown argument $1" ;;
  esac
done

# Semantic versioning: MAJOR.MINOR.PATCH, the same string for the package, the chart and the image.
[[ $version =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]] \
  || fail "VERSION $version is not MAJOR.MINOR.PATCH (e.g. 0.2.0; no v, no suffix)"
[[ -z "$(git status --porcelain)" ]] || fail "the working tree has changes: commit or stash them first"
git rev-parse -q --verify "refs/tags/v$version" >/dev/null && fail "tag v$version exists already"

current="$(sed -n 's/^__version__ = "\([^"]*\)".*/\1/p' omerender/__init__.py)"
chart="$(sed -n 's/^version: //p' charts/omereconcile/Chart.yaml)"
newest="$(printf '%s\n%s\n%s\n' "$current" "$chart" "$version" | sort -V | tail -n 1)"
if [[ "$newest" != "$version" || "$version" == "$current" ]]; then
  fail "VERSION $version must be newer than the package ($current) and not older than the chart ($chart)"
fi

# The Unreleased section must say something: a release without a changelog entry is refused.
python3 - "$version" "$(date -u +%F)" <<'PY'
import re, sys
from pathlib import Path

version, day = sys.argv[1], sys.argv[2]
path = Path("CHANGELOG.md")
text = path.read_text()
head = "## [Unreleased]\n"
start = text.find(head)
if start < 0:
    sys.exit("release: CHANGELOG.md has no '## [Unreleased]' section")
end = text.find("\n## [", start + len(head))
body = text[start + len(head) : end if end >= 0 else len(text)]
if not re.search(r"^- ", body, re.M):
    sys.exit("release: CHANGELOG.md's Unreleased section has no entry: say what this release changes")
# Empty subsections are dropped from the released section; Unreleased starts over, empty.
kept = re.split(r"(?m)^(?=### )", body.strip("\n"))
released = "\n\n".join(part.strip("\n") for part in kept if re.search(r"^- ", part, re.M))
fresh = head + "\n### Added\n\n### Changed\n\n### Fixed\n"
section = f"## [{version}] - {day}\n\n{released}\n"
path.write_text(text[:start] + fresh + "\n" + section + (text[end:] if end >= 0 else ""))
PY

sed -i "s/^__version__ = \"[^\"]*\"/__version__ = \"$version\"/" omerender/__init__.py
sed -i -e "s/^version: .*/version: $version/" -e "s/^appVersion: .*/appVersion: \"$version\"/" \
  charts/omereconcile/Chart.yaml
sed -i "s#\(image: ghcr.io/ome/omereconcile:\).*#\1$version#" deploy/base/deployment.yaml
# The pins users copy from the docs name the release they will install.
sed -i -E "s/(rev: v|@v)[0-9]+\.[0-9]+\.[0-9]+/\1$version/g" docs/ci-recipe.md README.md
sed -i -E "s/omerender-[0-9]+\.[0-9]+\.[0-9]+-py3-none-any\.whl/omerender-$version-py3-none-any.whl/g" README.md

rm -rf "$dist"
mkdir -p "$(dirname "$dist")"
python3 -m build --outdir "$dist" . >/dev/null 2>"$dist.log" || { cat "$dist.log" >&2; fail "the build failed"; }
rm -f "$dist.log"
test -f "$dist/omerender-$version.tar.gz" && test -f "$dist/omerender-$version-py3-none-any.whl" \
  || fail "the build did not make omerender-$version's sdist and wheel in $dist"
python3 -m twine check --strict "$dist"/* || fail "twine check refused the built files"

git add -A -- omerender/__init__.py charts/omereconcile/Chart.yaml deploy/base/deployment.yaml \
  docs/ci-recipe.md README.md CHANGELOG.md
git commit -q -m "release $version"
git tag -a "v$version" -m "omerender $version"
echo "release: committed and tagged v$version; built $(ls "$dist" | tr '\n' ' ')"
echo "release: push with: git push origin HEAD v$version"
