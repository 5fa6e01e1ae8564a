#!/usr/bin/env bash
# The lower bounds of pyproject.toml hold: a fresh venv gets the LOWEST version every direct dependency
# allows (uv pip install --resolution lowest-direct, the core and both extras), and the unit tests that
# exercise those dependencies' APIs run against it. The test tools come at their current versions (they
# are not the package's dependencies).
#
# Which tests: one or two per dependency (listed below), about 90 s with the installs. The whole unit tier
# is far longer (a partial run on two shared cores projected over 30 minutes) and exercises the same
# dependency APIs; MIN_VERSIONS_TESTS=tests/unit runs it all.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
venv="$work/venv"
core_tests="${MIN_VERSIONS_CORE_TESTS:-
  tests/unit/test_models.py tests/unit/test_public_api.py
  tests/unit/test_crdschema.py tests/unit/test_revision.py
}"
tests="${MIN_VERSIONS_TESTS:-
  tests/unit/test_models.py tests/unit/test_public_api.py
  tests/unit/test_yaml_c_loader.py
  tests/unit/test_crdschema.py tests/unit/test_cli_validate.py
  tests/unit/test_fnv_c.py tests/unit/test_revision.py
  tests/unit/test_kube.py
  tests/unit/test_metrics.py
  tests/unit/test_certrotator.py tests/unit/test_secure_metrics.py tests/unit/test_webhook_server.py tests/unit/test_entry.py
  tests/unit/test_diff.py
  tests/unit/test_deploy_manifests.py tests/unit/test_render_validate_crds.py
  tests/unit/test_chart.py
}"

deps='^(pydantic|pyyaml|jsonschema|jsonschema-rs|fnv-hash-fast|kubernetes|kubernetes-validate|prometheus-client|cryptography|deepdiff)=='
start=$(date +%s)
uv venv --quiet --python python3 "$venv"
uv pip install --quiet --python "$venv/bin/python" pytest syrupy hypothesis
# 1. The core install (no extras) at its lowest: the extras' own dependencies raise some of these
#    (kubernetes 37 needs a newer pydantic and pyyaml), so they are checked alone first.
uv pip install --quiet --python "$venv/bin/python" --resolution lowest-direct .
echo "== min-versions: core install at the lowest versions pyproject.toml allows"
uv pip freeze --python "$venv/bin/python" | grep -iE "$deps"
"$venv/bin/python" -m pytest -p no:cacheprovider -q $core_tests
# 2. With both extras at their lowest.
uv pip install --quiet --python "$venv/bin/python" --resolution lowest-direct '.[reconcile,tools]'
echo "== min-versions: with the reconcile and tools extras at their lowest"
uv pip freeze --python "$venv/bin/python" | grep -iE "$deps"
# shellcheck disable=SC2086  # the test lists are words
"$venv/bin/python" -m pytest -p no:cacheprovider -q $tests
echo "== min-versions: passed in $(( $(date +%s) - start ))s (installs included)"
