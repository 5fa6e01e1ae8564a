#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: static checks, the Go builds (differential encoder and
# the test control plane), then every pytest tier in one run so stale golden snapshots are detected.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== static checks"
ruff check .
ruff format --check .
mypy
lint-imports

echo "== test control plane (Go build, cached by version)"
assets=$(bash testbed/build.sh | tail -n 1)
eval "$assets"   # export KUBEBUILDER_ASSETS=...
test -x "$KUBEBUILDER_ASSETS/kube-apiserver"

echo "== gang scheduler: scheduler-plugins Coscheduling (Go build, cached by version)"
cosched=$(bash testbed/build-coscheduler.sh | tail -n 1)
eval "$cosched"   # export COSCHEDULER_ASSETS=...
test -x "$COSCHEDULER_ASSETS/scheduler"

if [[ $# -eq 0 ]]; then  # the whole run (CI); a run narrowed to some tests skips the figures
  echo "== fleet benchmark at CI size (figures only; the full size is in docs/reconciler.md)"
  python3 benchmarks/bench_fleet.py --replicas 100 --pools 10 --instances 4
fi

echo "== tests"
set +e
python3 -m pytest -p no:cacheprovider "$@"
code=$?
set -e
if [[ $code -eq 5 ]]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit $code
