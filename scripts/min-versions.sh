#!/usr/bin/env bash
# The lower bounds of pyproject.toml hold: a fresh venv gets the LOWEST version every direct dependency
# allows (uv pip install --resolution lowest-direct, the core and both extras), and the unit tests that
# exercise those dependencies' APIs run against it. The test tools come at their current versions (they
# are not the package's dependencies).
#
# Which tests: the unit test modules that import one of those dependencies or a module of ours that
# does (the loader, the models, the CRD schemas, the kube client, the metrics, the CLI's readers, ...), computed
# each run from the imports written in the files by scripts/min_versions_tests.py (its docstring says
# the rule). Not the whole unit tier: CI runs this beside the cold Go builds, and the other modules
# (planner, forecast, shards, timeline, ...) exercise our own logic, which the dependencies' versions
# do not change, while costing the Go builds CPU. MIN_VERSIONS_TESTS overrides the list. The core
# install alone runs the tests of the core's own dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
venv="$work/venv"
core_tests="${MIN_VERSIONS_CORE_TESTS:-
  tests/unit/test_models.py tests/unit/test_public_api.py
  tests/unit/test_crdschema.py tests/unit/test_revision.py
  tests/unit/test_cli_startup.py tests/unit/test_records.py
}"
tests="${MIN_VERSIONS_TESTS:-$(python3 scripts/min_versions_tests.py)}"

deps='^(pydantic|pyyaml|jsonschema|jsonschema-rs|fnv-hash-fast|shtab|kubernetes|kubernetes-validate|prometheus-client|cryptography|deepdiff)=='
start=$(date +%s)
# Installed from a copy: setuptools builds in the source tree's build/, and testbed/image.sh builds this
# tree's wheel at the same time in CI (two builds in one build/ collide: "File exists ... dist-info").
src="$work/src"
mkdir "$src"
tar -c --exclude=./.git --exclude=./build --exclude=./dist --exclude='*.egg-info' . | tar -x -C "$src"
uv venv --quiet --python python3 "$venv"
# The test tools of the dev extra, current (pdoc and pre-commit: the unit tier runs them too).
uv pip install --quiet --python "$venv/bin/python" pytest syrupy hypothesis pdoc pre-commit
# 1. The core install (no extras) at its lowest: the extras' own dependencies raise some of these
#    (kubernetes 37 needs a newer pydantic and pyyaml), so they are checked alone first.
uv pip install --quiet --python "$venv/bin/python" --resolution lowest-direct "$src"
echo "== min-versions: core install at the lowest versions pyproject.toml allows"
uv pip freeze --python "$venv/bin/python" | grep -iE "$deps"
"$venv/bin/python" -m pytest -p no:cacheprovider -q $core_tests
# 2. With both extras at their lowest.
uv pip install --quiet --python "$venv/bin/python" --resolution lowest-direct "$src[reconcile,tools]"
echo "== min-versions: with the reconcile and tools extras at their lowest ($(wc -w <<<"$tests") unit test modules)"
uv pip freeze --python "$venv/bin/python" | grep -iE "$deps"
# shellcheck disable=SC2086  # the test lists are words
"$venv/bin/python" -m pytest -p no:cacheprovider -q $tests
echo "== min-versions: passed in $(( $(date +%s) - start ))s (installs included)"
