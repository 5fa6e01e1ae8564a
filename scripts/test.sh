#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: static checks, the Go builds (differential encoder, the
# test control plane, helm) and the reconciler image, then the pytest tiers: those that need no cluster
# on two xdist workers in one run (stale or unused golden snapshots are detected), then tests/cluster.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each phase's wall time, printed when the next one starts and at the end, so a CI log says where the
# time went (`phase NAME` opens one; SECONDS is bash's clock since the script started).
phase_name="setup (pip install -e, Debian packages)"
phase_start=$SECONDS
phase() {
  echo "-- ${phase_name}: $((SECONDS - phase_start))s (total $((SECONDS))s)"
  phase_name="$1"
  phase_start=$SECONDS
  [ -z "$1" ] || echo "== $1"
}
trap 'phase ""' EXIT
bash scripts/setup.sh

phase "static checks"
ruff check .
ruff format --check .
mypy
lint-imports
python3 scripts/apidocs.py   # the API reference from the docstrings (pdoc): any warning fails

# Before the background jobs start: the minimum-versions job runs the unit tier, whose Mermaid test
# renders with mermaid-cli and fails (never skips) without it.
phase "mermaid-cli on Debian's chromium (npm, pinned, cached outside the repository)"
eval "$(bash scripts/mermaid-cli.sh | tail -n 1)"   # export MMDC=... MMDC_PUPPETEER_CONFIG=...

# The image build mostly downloads and unpacks Debian packages, so it runs beside the Go builds (which
# keep both cores busy) instead of after them; its log is printed when it is waited for.
image_log="$(mktemp)"
timed() {  # timed NAME CMD...: run CMD and print its wall seconds to stderr, keeping its exit code
  local name="$1" start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  echo "-- $name (in the background): $((SECONDS - start))s" >&2
  return $rc
}
timed testbed/image.sh bash testbed/image.sh >"$image_log" 2>"$image_log.err" &
image_pid=$!

# Releases that install (the built wheel in a fresh venv, every console script run from outside the
# repository) and the lower bounds of pyproject.toml (the lowest versions, with the dependency-facing
# unit tests, about three-fifths of the unit tier's time: scripts/min_versions_tests.py): mostly downloads, so they
# run beside the Go builds too.
release_log="$(mktemp)"
if [[ $# -eq 0 ]]; then
  (timed scripts/wheel-smoke.sh bash scripts/wheel-smoke.sh && timed scripts/min-versions.sh bash scripts/min-versions.sh) >"$release_log" 2>&1 &
  release_pid=$!
fi

phase "test control plane (Go build, cached by version)"
assets=$(bash testbed/build.sh | tail -n 1)
eval "$assets"   # export KUBEBUILDER_ASSETS=...
test -x "$KUBEBUILDER_ASSETS/kube-apiserver"

phase "gang scheduler: scheduler-plugins Coscheduling (Go build, cached by version)"
cosched=$(bash testbed/build-coscheduler.sh | tail -n 1)
eval "$cosched"   # export COSCHEDULER_ASSETS=...
test -x "$COSCHEDULER_ASSETS/scheduler"

phase "strategic-merge oracle (Go build from the module proxy, cached by its sources)"
merge_oracle=$(bash tools/strategicmerge/build.sh | tail -n 1)
eval "$merge_oracle"   # export STRATEGICMERGE_BIN=...
test -x "$STRATEGICMERGE_BIN"

phase "helm (Go build from the module proxy, cached by version)"
eval "$(bash testbed/helm.sh | tail -n 1)"   # export HELM=...

phase "reconciler image (mmdebstrap base cached by its inputs, buildah bud; started with the Go builds)"
image_ok=0
wait "$image_pid" || image_ok=$?
cat "$image_log.err" "$image_log" >&2
if [[ $image_ok -ne 0 ]]; then
  echo "testbed/image.sh failed (exit $image_ok)" >&2
  exit 1
fi
eval "$(tail -n 1 "$image_log")"   # export OMERECONCILE_IMAGE=...
rm -f "$image_log" "$image_log.err"

if [[ $# -eq 0 ]]; then
  phase "release: sdist + wheel installed in a fresh venv; minimum dependency versions (started with the Go builds)"
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
  phase "fleet benchmark at CI size (figures only; the full size is in docs/reconciler.md)"
  python3 benchmarks/bench_fleet.py --replicas 100 --pools 10 --instances 4
fi

# The whole run (CI): the tiers that need no cluster on two pytest-xdist workers, then the cluster tier
# alone in one process, so its timing-sensitive tests (rolls, deadlines, leases against a real control
# plane) share the machine with nothing of ours. Syrupy gathers the workers' snapshot reports, and the
# first run names no path (`--ignore`, not a path list), so a stale or unused golden snapshot still fails
# it (tests/golden/test_snapshot_hygiene.py). A run narrowed by arguments is one plain pytest process.
pytest_run() {  # pytest_run ARGS...: pytest's exit code, a run that collected nothing counted as failed
  local code=0
  python3 -m pytest -p no:cacheprovider --durations=30 "$@" || code=$?
  if [[ $code -eq 5 ]]; then
    echo "pytest collected no tests: that is a failure here" >&2
    code=1
  fi
  return $code
}
code=0
if [[ $# -eq 0 ]]; then
  phase "tests: every tier but tests/cluster (pytest-xdist, 2 workers)"
  pytest_run -n 2 --ignore=tests/cluster || code=$?
  phase "tests: tests/cluster (one process)"
  pytest_run tests/cluster || code=$?
else
  phase "tests"
  pytest_run "$@" || code=$?
fi
exit $code
