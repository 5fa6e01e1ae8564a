#!/usr/bin/env bash
# Releases that install: build the sdist and the wheel (python -m build, from the sdist, in an isolated
# build environment), install the wheel into a fresh venv with no extras and run every console script from
# outside the repository: `--help` exits 0, or 2 with a message naming the extra it needs, never a
# traceback; `--version` prints the version. Then the same with the tools and reconcile extras, where
# every `--help` exits 0, and `render --validate` of the example replica passes.
# Usage: bash scripts/wheel-smoke.sh [DIST_DIR]   (the built files stay in DIST_DIR, default a temp dir)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
dist="${1:-$work/dist}"
version="$(python3 -c 'import ast,sys; t=ast.parse(open(sys.argv[1]).read()); print(next(n.value.value for n in t.body if isinstance(n, ast.Assign) and n.targets[0].id == "__version__"))' "$repo/omerender/__init__.py")"

python3 -m build --outdir "$dist" "$repo" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
wheel="$dist/omerender-$version-py3-none-any.whl"
sdist="$dist/omerender-$version.tar.gz"
test -f "$wheel" && test -f "$sdist"
# The package data the CLI reads without a checkout.
python3 - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
crds = [n for n in names if n.startswith("omerender/data/crds/")]
assert len(crds) == 8, crds  # the seven OME CRDs and the scheduler-plugins PodGroup
for n in ("omerender/py.typed", "omereconcile/py.typed"):
    assert n in names, n
assert not [n for n in names if n.startswith(("tests/", "testbed/", "tools/"))]
PY
echo "wheel-smoke: built $(basename "$wheel") and $(basename "$sdist")"

venv="$work/venv"
uv venv --quiet --python python3 "$venv"
uv pip install --quiet --python "$venv/bin/python" "$wheel"
cd "$work"  # outside the repository: nothing can be imported from the source tree
commands=(omerender omerender-kdiff omereconcile kubectl-ome)

check_help() {  # $1: "core" (2 naming the extra allowed) or "full" (0 only)
  local cmd code out
  for cmd in "${commands[@]}"; do
    set +e
    out="$("$venv/bin/$cmd" --help 2>&1)"
    code=$?
    set -e
    if grep -q "Traceback" <<<"$out"; then
      echo "wheel-smoke: $cmd --help ($1 install) printed a traceback:" >&2; echo "$out" >&2; exit 1
    fi
    if [[ $code -eq 0 ]]; then
      echo "wheel-smoke: $1: $cmd --help -> 0"
    elif [[ $code -eq 2 && $1 == core ]] && grep -Eq "needs the '(tools|reconcile)' extra" <<<"$out"; then
      echo "wheel-smoke: $1: $cmd --help -> 2: $out"
    else
      echo "wheel-smoke: $cmd --help ($1 install) exited $code:" >&2; echo "$out" >&2; exit 1
    fi
  done
  for cmd in omerender omerender-kdiff omereconcile kubectl-ome; do
    out="$("$venv/bin/$cmd" --version)"
    [[ $out == "$cmd $version" ]] || { echo "wheel-smoke: $cmd --version printed '$out'" >&2; exit 1; }
  done
}

check_help core
"$venv/bin/python" -c "import omerender; assert omerender.__version__ == '$version'"
uv pip install --quiet --python "$venv/bin/python" "$wheel[tools,reconcile]"
check_help full
"$venv/bin/omerender" render "$repo/examples/llama-pool.yaml" --objects "$repo/examples/catalog" \
  --instances 2 --validate >/dev/null
echo "wheel-smoke: ok (render --validate of examples/llama-pool.yaml with the installed wheel)"
