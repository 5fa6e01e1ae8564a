#!/usr/bin/env bash
# Installs the project and every Python tool it needs into the current Python (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -e '.[reconcile,tools,dev]'
