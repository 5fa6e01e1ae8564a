#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: static checks, the Go builds (differential encoder, the
# test control plane, helm) and the reconciler image, then every pytest tier in one run so stale golden
# snapshots are detected.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== static checks"
ruff check .
ruff format --check .
mypy
lint-imports
python3 scripts/apidocs.py   # the API reference from the docstrings (pdoc): any warning fails

# Before the background jobs start: the minimum-versions job runs the unit tier, whose Mermaid test
# renders with mermaid-cli and fails (never skips) without it.
echo "== mermaid-cli on Debian's chromium (npm, pinned, cached outside the repository)"
eval "$(bash scripts/mermaid-cli.sh | tail -n 1)"   # export MMDC=... MMDC_PUPPETEER_CONFIG=...

# The image build mostly downloads and unpacks Debian packages, so it runs beside the Go builds (which
# keep both cores busy) instead of after them; its log is printed when it is waited for.
image_log="$(mktemp)"
bash testbed/image.sh >"$image_log" 2>&1 &
image_pid=$!

# Releases that install (the built wheel in a fresh venv, every console script run from outside the
# repository) and the lower bounds of pyproject.toml (the lowest versions, with the dependency-facing
# unit tests): mostly downloads, so they run beside the Go builds too. About five minutes together (the minimum versions run the whole unit tier).
release_log="$(mktemp)"
if [[ $# -eq 0 ]]; then
  (bash scripts/wheel-smoke.sh && bash scripts/min-versions.sh) >"$release_log" 2>&1 &
  release_pid=$!
fi

echo "== test control plane (Go build, cached by version)"
assets=$(bash testbed/build.sh | tail -n 1)
eval "$assets"   # export KUBEBUILDER_ASSETS=...
test -x "$KUBEBUILDER_ASSETS/kube-apiserver"

echo "== gang scheduler: scheduler-plugins Coscheduling (Go build, cached by version)"
cosched=$(bash testbed/build-coscheduler.sh | tail -n 1)
eval "$cosched"   # export COSCHEDULER_ASSETS=...
test -x "$COSCHEDULER_ASSETS/scheduler"

echo "== strategic-merge oracle (Go build from the module proxy, cached by its sources)"
merge_oracle=$(bash tools/strategicmerge/build.sh | tail -n 1)
eval "$merge_oracle"   # export STRATEGICMERGE_BIN=...
test -x "$STRATEGICMERGE_BIN"

echo "== helm (Go build from the module proxy, cached by version)"
eval "$(bash testbed/helm.sh | tail -n 1)"   # export HELM=...

echo "== reconciler image (mmdebstrap base cached by its inputs, buildah bud; started with the Go builds)"
image_ok=0
wait "$image_pid" || image_ok=$?
cat "$image_log" >&2
if [[ $image_ok -ne 0 ]]; then
  echo "testbed/image.sh failed (exit $image_ok)" >&2
  exit 1
fi
eval "$(tail -n 1 "$image_log")"   # export OMERECONCILE_IMAGE=...
rm -f "$image_log"

if [[ $# -eq 0 ]]; then
  echo "== release: sdist + wheel installed in a fresh venv; minimum dependency versions (started with the Go builds)"
  release_ok=0
  wait "$release_pid" || release_ok=$?
  cat "$release_log"
  if [[ $release_ok -ne 0 ]]; then
    echo "scripts/wheel-smoke.sh or scripts/min-versions.sh failed (exit $release_ok)" >&2
    exit 1
  fi
fi
rm -f "$release_log"

if [[ $# -eq 0 ]]; then  # the whole run (CI); a run narrowed to some tests skips the figures
  echo "== fleet benchmark at CI size (figures only; the full size is in docs/reconciler.md)"
  python3 benchmarks/bench_fleet.py --replicas 100 --pools 10 --instances 4
fi

echo "== tests"
set +e
python3 -m pytest -p no:cacheprovider --durations=30 "$@"
code=$?
set -e
if [[ $code -eq 5 ]]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit $code
