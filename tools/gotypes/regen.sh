#!/usr/bin/env bash
# Rebuild schemas/k8s-go-fields.json from the k8s.io/api version pinned in go.mod, then
# regenerate omerender/_gofields.py from it. One command:  tools/gotypes/regen.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"
tmp="$(mktemp "$root/schemas/.k8s-go-fields.json.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
(cd "$here" && go run -buildvcs=false ./cmd/fieldtable) >"$tmp"
mv "$tmp" "$root/schemas/k8s-go-fields.json"
trap - EXIT
"$python" "$here/gen_gofields.py"
